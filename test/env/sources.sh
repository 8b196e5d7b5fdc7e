#!/usr/bin/env bash
# Source snapshots of public repositories whose Go modules the Go module proxy here refuses
# (TopoLVM, some CSI sidecars, pulumi-kubernetes' and pulumi-command's providers, the 3.248
# language hosts). They live in shared/sources beside the clone (../shared/sources), or where
# PULUMI_LVM_SOURCES points. This repository pins their SHA256 in test/env/sources.sha256: a
# snapshot whose hash differs is refused, whatever shared/ says.
#
# Source it, then:
#   unpack_snapshot <file name> <dest dir>   verify and unpack into <dest dir> (once; a stamp file
#                                            names the hash, so a changed pin unpacks again);
#                                            prints the top directory of the tree (<dest>/<name>-<tag>);
#                                            an unpacked tree whose stamp has the pinned hash is used
#                                            as it is, without the snapshots
# Both fail loudly: a missing or different snapshot is an error, never a skipped build.

_sources_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

sources_dir() {
  local dir="${PULUMI_LVM_SOURCES:-$_sources_here/../../../shared/sources}"
  # A clone made elsewhere (e.g. under /tmp) of a local checkout that has shared/ beside it: the
  # origin's shared/sources. Safe to use: every snapshot is still checked against sources.sha256.
  local origin
  if [ -z "${PULUMI_LVM_SOURCES:-}" ] && [ ! -d "$dir" ] &&
    origin=$(git -C "$_sources_here" config --get remote.origin.url 2>/dev/null) &&
    [ -d "$origin/../shared/sources" ]; then
    dir="$origin/../shared/sources"
  fi
  if [ ! -d "$dir" ]; then
    echo "sources.sh: no source snapshots at $dir (set PULUMI_LVM_SOURCES to the shared/sources directory)" >&2
    return 1
  fi
  (cd "$dir" && pwd)
}

# The pinned hash of a snapshot, from test/env/sources.sha256.
snapshot_sha256() {
  awk -v f="$1" '$2 == f { print $1; found = 1 } END { exit !found }' "$_sources_here/sources.sha256" || {
    echo "sources.sh: $1 is not pinned in test/env/sources.sha256" >&2
    return 1
  }
}

# Whether <top> was unpacked from the snapshot with hash <want> (its stamp file <stamp> says so).
_unpacked() { [ -d "$1" ] && [ "$(cat "$2" 2>/dev/null)" = "$3" ]; }

unpack_snapshot() {
  local file="$1" dest="$2" dir want got top stamp
  want=$(snapshot_sha256 "$file") || return 1
  top="$dest/${file%.tar.gz}"
  stamp="$dest/.${file}.sha256"
  # Unpacked before from a snapshot with the pinned hash: the snapshots themselves are not needed
  # (a clone with no shared/ beside it and a warm cache runs, as its cached Go builds do).
  if _unpacked "$top" "$stamp" "$want"; then
    echo "$top"
    return 0
  fi
  dir=$(sources_dir) || return 1
  [ -f "$dir/$file" ] || { echo "sources.sh: $dir/$file is missing" >&2; return 1; }
  got=$(sha256sum "$dir/$file" | awk '{ print $1 }')
  if [ "$got" != "$want" ]; then
    echo "sources.sh: $dir/$file has sha256 $got, test/env/sources.sha256 pins $want: refusing it" >&2
    return 1
  fi
  mkdir -p "$dest" || return 1
  # Two tiers can ask for the same tree at once on a cold cache (the cluster tier and the Kubernetes
  # tier both read TopoLVM's chart): one unpacks under the lock, the others wait and use its tree.
  # The stamp goes first and comes back last, so an interrupted unpack is redone.
  (
    flock 9 || exit 1
    _unpacked "$top" "$stamp" "$want" && exit 0
    rm -f "$stamp"
    rm -rf "$top"
    tar -xzf "$dir/$file" -C "$dest" || { echo "sources.sh: cannot unpack $dir/$file" >&2; exit 1; }
    [ -d "$top" ] || { echo "sources.sh: $file did not unpack to $top" >&2; exit 1; }
    echo "$want" >"$stamp"
  ) 9>"$dest/.${file}.lock" || return 1
  echo "$top"
}
