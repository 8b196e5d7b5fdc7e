#!/usr/bin/env bash
# Go builds of the source snapshots (test/env/sources.sh) into a stamped directory, as the provider
# plugin scripts (test/pulumi/install-command.sh, test/pulumi/install-kubernetes.sh) do them: the
# same toolchain lookup, caches and module pinning, and one stamp that names the build's inputs, so
# a re-run with the same inputs returns at once and a changed input builds again.
#
# Source it, then:
#   go_toolchain <cache dir>          sets go_bin (go on PATH, else /usr/local/go/bin/go) and exports
#                                     GOCACHE / GOMODCACHE (<cache dir>/go/{build,mod}, shared with
#                                     the other Go builds), GOTOOLCHAIN=local, CGO_ENABLED=0, and the
#                                     pinning below; returns 1 (saying why) when there is no Go
#   stamp_current <dir> <binary> <stamp>
#                                     true when <dir>/<binary> is executable and <dir>/.stamp says
#                                     <stamp> (built from these inputs: nothing to build)
#   exit_if_built <script> <what> <dir> <binary> <stamp>
#                                     when stamp_current <dir> <binary> <stamp>: says "<script>: <what>
#                                     already in <dir> (nothing to build)", prints <dir> and exits the
#                                     script with 0 (what a caller prints when it built)
#   install_stamped <staging dir> <binary> <dir> <stamp>
#                                     replaces <dir> with one holding <staging dir>/<binary> and the
#                                     stamp, moved into place whole (an interrupted build never leaves
#                                     a directory that stamp_current takes as done); returns 1
#                                     when a step fails
# Each returns 1 rather than exiting (exit_if_built exits only when there is nothing to do): call
# them as `f ... || fail "..."`.

go_toolchain() {
  local cache="$1"
  # shellcheck disable=SC2034 # go_bin is for the script that sources this file
  go_bin=$(command -v go || true)
  [ -n "$go_bin" ] || { [ -x /usr/local/go/bin/go ] && go_bin=/usr/local/go/bin/go; } || true
  if [ -z "$go_bin" ]; then
    echo "go-build.sh: no Go toolchain found (looked in PATH and /usr/local/go/bin/go)" >&2
    return 1
  fi
  export GOCACHE="$cache/go/build"
  export GOMODCACHE="$cache/go/mod"
  export GOTOOLCHAIN=local
  export CGO_ENABLED=0
  # go.sum (the snapshot's, or its patch's) pins every module; -mod=readonly makes a go.mod or go.sum
  # that does not resolve as pinned an error instead of an edit. The checksum database reachable here
  # has no entry for the pulumi/pulumi modules (as in test/pulumi/install.sh); go.sum pins their hashes.
  export GOFLAGS="-mod=readonly -buildvcs=false"
  export GONOSUMDB=github.com/pulumi/pulumi
  mkdir -p "$GOCACHE" "$GOMODCACHE" || return 1
}

stamp_current() {
  local dir="$1" binary="$2" stamp="$3"
  [ -x "$dir/$binary" ] && [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ]
}

exit_if_built() {
  local script="$1" what="$2" dir="$3" binary="$4" stamp="$5"
  stamp_current "$dir" "$binary" "$stamp" || return 0
  echo "$script: $what already in $dir (nothing to build)"
  echo "$dir"
  exit 0
}

install_stamped() {
  local staging="$1" binary="$2" dir="$3" stamp="$4"
  # Every step is checked here: a caller's `|| fail` turns errexit off inside the function.
  rm -rf "$dir" &&
    mkdir -p "$staging/.install" &&
    mv "$staging/$binary" "$staging/.install/" &&
    echo "$stamp" >"$staging/.install/.stamp" &&
    mv "$staging/.install" "$dir"
}
