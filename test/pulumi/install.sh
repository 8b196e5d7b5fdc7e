#!/usr/bin/env bash
# Installs the real Pulumi engine binaries that the engine end-to-end tier runs
# (test/pulumi/engine-e2e.test.ts, python-sdk.test.ts, component-provider.test.ts): the CLI, built through the
# Go module proxy by the wrapper module test/pulumi/go/cli, and the Node.js and Python language
# hosts of the same release, built from the source snapshot pulumi-language-hosts-<version>
# (test/env/sources.sh) with the go.mod/go.sum in test/pulumi/go/{nodejs,python}. Idempotent:
# binaries that already exist are not rebuilt.
#
#   bash test/pulumi/install.sh            # build what is missing, print the bin directory
#   PULUMI_LVM_CACHE=/some/dir bash test/pulumi/install.sh
#
# Layout (the version is the CLI's, from test/pulumi/go/cli/go.mod):
#   $PULUMI_LVM_CACHE/pulumi/<version>/bin/pulumi                          the CLI (engine, file backend)
#   $PULUMI_LVM_CACHE/pulumi/<version>/bin/pulumi-language-nodejs          the Node.js language host
#   $PULUMI_LVM_CACHE/pulumi/<version>/bin/pulumi-language-python          the Python language host
#   $PULUMI_LVM_CACHE/pulumi/<version>/bin/pulumi-language-python-exec     its exec shim (a Python script)
#   $PULUMI_LVM_CACHE/pulumi/<version>/python-wheels/                      pulumi==<version> and its deps (PyPI)
#   $PULUMI_LVM_CACHE/pulumi/src/pulumi-language-hosts-<version>/           the unpacked, verified snapshot
#   $PULUMI_LVM_CACHE/pulumi/<version>/bin/pulumi-resource-pulumi-nodejs   the dynamic-provider plugin
#   $PULUMI_LVM_CACHE/go/{build,mod}    GOCACHE / GOMODCACHE, shared with test/env/install.sh
# PULUMI_LVM_CACHE defaults to $HOME/.cache/pulumi-lvm. See docs/testing-pulumi.md.
set -euo pipefail

start=$(date +%s.%N)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

fail() {
  echo "" >&2
  echo "############################################################" >&2
  echo "test/pulumi/install.sh FAILED: $*" >&2
  echo "############################################################" >&2
  exit 1
}
trap 'fail "command failed (exit $?) at line $LINENO: $BASH_COMMAND"' ERR

elapsed() { awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }'; }

# The version of a module required by a go.mod: `require m v` or `m v` inside a require block.
mod_version() {
  awk -v m="$2" '$1 == "require" && $2 == m { print $3; exit } $1 == m && $2 ~ /^v/ { print $2; exit }' "$1"
}
cli_version=$(mod_version "$here/go/cli/go.mod" github.com/pulumi/pulumi/pkg/v3)
[ -n "$cli_version" ] || fail "cannot read the github.com/pulumi/pulumi/pkg/v3 version from $here/go/cli/go.mod"
# The language hosts are built from the snapshot of the CLI's release, against the published pkg/v3
# and sdk/v3 of that release (their go.mod files in test/pulumi/go/{nodejs,python} say so).
for lang in nodejs python; do
  for m in pkg sdk; do
    v=$(mod_version "$here/go/$lang/go.mod" "github.com/pulumi/pulumi/$m/v3")
    [ "$v" = "$cli_version" ] || fail "test/pulumi/go/$lang/go.mod requires github.com/pulumi/pulumi/$m/v3 '$v', not the CLI's $cli_version"
  done
done
host_version=$cli_version
hosts_snapshot="pulumi-language-hosts-$host_version.tar.gz"

# The CLI is meant to be the release of the @pulumi/pulumi the package locks; say so when they part.
sdk_version=$(node -p 'require(process.argv[1]).packages["node_modules/@pulumi/pulumi"]?.version ?? ""' \
  "$repo/package-lock.json" 2>/dev/null || true)
if [ -n "$sdk_version" ] && [ "v$sdk_version" != "$cli_version" ]; then
  echo "install.sh: WARNING: package-lock.json has @pulumi/pulumi $sdk_version but test/pulumi/go/cli/go.mod builds the CLI $cli_version; update the wrapper module (docs/testing-pulumi.md)" >&2
fi

cache="${PULUMI_LVM_CACHE:-$HOME/.cache/pulumi-lvm}"
bin="$cache/pulumi/$cli_version/bin"
mkdir -p "$bin"

# The plugin the CLI starts for dynamic providers (pulumi-nodejs): it runs @pulumi/pulumi's
# dynamic-provider host as resolved from the directory the engine starts it in (the program's).
# Rewritten on every run (it is tiny), so a change here always reaches the cache.
plugin="$bin/pulumi-resource-pulumi-nodejs"
tmp=$(mktemp "$plugin.XXXXXX")
cat >"$tmp" <<'EOF'
#!/bin/sh
# Pulumi's dynamic-provider plugin (written by pulumi-lvm's test/pulumi/install.sh): runs the
# dynamic-provider host of the @pulumi/pulumi that the program's directory resolves.
host=$(node -e 'process.stdout.write(require.resolve("@pulumi/pulumi/cmd/dynamic-provider"))') || {
  echo "pulumi-resource-pulumi-nodejs: cannot resolve @pulumi/pulumi/cmd/dynamic-provider from $(pwd)" >&2
  exit 1
}
exec node "$host" "$@"
EOF
chmod 755 "$tmp"
mv "$tmp" "$plugin"

# name -> "<module file> <package path, or a directory of the snapshot> <version>". The language
# hosts' own modules are refused by the Go module proxy here (403), so they are built from the
# snapshot's directory with our module file (go build -modfile): the same sources, the published
# pkg/v3 and sdk/v3 in place of upstream's replace directives into the monorepo.
declare -A builds=(
  [pulumi]="$here/go/cli/go.mod github.com/pulumi/pulumi/pkg/v3/cmd/pulumi $cli_version"
  [pulumi-language-nodejs]="$here/go/nodejs/go.mod sdk/nodejs/cmd/pulumi-language-nodejs $host_version"
  [pulumi-language-python]="$here/go/python/go.mod sdk/python/cmd/pulumi-language-python $host_version"
)
names=(pulumi pulumi-language-nodejs pulumi-language-python)

# A binary is current when it exists and its stamp names the module version it was built from.
missing=()
for name in "${names[@]}"; do
  read -r _ _ version <<<"${builds[$name]}"
  if [ ! -x "$bin/$name" ] || [ "$(cat "$bin/.$name.version" 2>/dev/null)" != "$version" ]; then
    missing+=("$name")
  fi
done

# The Python SDK of the CLI's release (pulumi==<version> from PyPI, with what it needs, and the
# build backend pip needs to install a generated SDK), as wheels: the Python tests make their own
# virtualenv from them offline (PIP_NO_INDEX, PIP_FIND_LINKS), so no test run reaches PyPI.
# parver: every SDK that `pulumi package add` generates for Python requires it (measured: pip
# failed with "No matching distribution found for parver>=0.2.1" without it).
wheel_reqs="pulumi==${cli_version#v} parver setuptools wheel"
wheels="$cache/pulumi/$cli_version/python-wheels"
if [ ! -f "$wheels/.complete" ] || [ "$(cat "$wheels/.requirements" 2>/dev/null)" != "$wheel_reqs" ]; then
  command -v python3 >/dev/null || fail "no python3 on PATH (the Python tier needs it; apt-get install python3 python3-venv)"
  python3 -c 'import venv, ensurepip' 2>/dev/null || fail "python3 has no venv/ensurepip (apt-get install python3-venv)"
  rm -rf "$wheels.tmp"
  t0=$(date +%s)
  # shellcheck disable=SC2086 # the requirements are words
  python3 -m pip download --quiet --disable-pip-version-check -d "$wheels.tmp" $wheel_reqs ||
    fail "pip download of $wheel_reqs failed"
  echo "$wheel_reqs" >"$wheels.tmp/.requirements"
  ls "$wheels.tmp" >"$wheels.tmp/.complete"
  rm -rf "$wheels"
  mv "$wheels.tmp" "$wheels"
  echo "install.sh: downloaded the wheels of pulumi==${cli_version#v} into $wheels in $(($(date +%s) - t0)) s"
fi

# The Python host runs programs through this script, which it looks for next to itself. Copied from
# the snapshot on every run that builds anything, and whenever it is missing.
exec_shim="$bin/pulumi-language-python-exec"
if [ "${#missing[@]}" -eq 0 ] && [ -x "$exec_shim" ]; then
  echo "install.sh: pulumi $cli_version binaries already in $bin (nothing to build, $(elapsed) s)"
  echo "$bin"
  exit 0
fi

command -v node >/dev/null || fail "no node on PATH (the language host and the plugin run it)"
# The toolchain, caches and settings of every other Go build (test/env/go-build.sh).
# shellcheck source=../env/go-build.sh
source "$repo/test/env/go-build.sh"
go_toolchain "$cache" || fail "no Go toolchain to build with"
# GOFLAGS as this script always had it (go-build.sh's -mod=readonly is for its shared module): the
# language hosts' builds below pass -mod=readonly themselves. The checksum database reachable here has
# no entry for pkg/v3 nor sdk/v3 v3.248.0 (404), so it is not asked for these modules (go_toolchain's
# GONOSUMDB); the go.sum files in test/pulumi/go pin their hashes, and go checks every download
# against them.
export GOFLAGS=-mod=mod

echo "install.sh: building ${missing[*]:-nothing} (pulumi $cli_version, language hosts from $hosts_snapshot) with $("$go_bin" version) into $bin"
echo "install.sh: GOCACHE=$GOCACHE GOMODCACHE=$GOMODCACHE"

# shellcheck source=../env/sources.sh
source "$repo/test/env/sources.sh"
hosts_src=$(unpack_snapshot "$hosts_snapshot" "$cache/pulumi/src") ||
  fail "cannot unpack the source snapshot $hosts_snapshot (see test/env/sources.sh)"

# Build into a scratch directory and move into place only on success, so an interrupted
# build never leaves a binary that a re-run would take as done.
staging=$(mktemp -d "$bin/.build.XXXXXX")
trap 'rm -rf "$staging"' EXIT
for name in "${missing[@]}"; do
  read -r modfile pkg version <<<"${builds[$name]}"
  t0=$(date +%s)
  echo "install.sh: go build -o $name $pkg ($version)"
  if [ "$name" = pulumi ]; then
    dir=$(dirname "$modfile") target=$pkg modflags=()
  else
    # -mod=readonly: a module file that does not fit the sources fails here instead of being edited
    # in the checkout.
    dir="$hosts_src/$pkg" target=. modflags=(-modfile="$modfile" -mod=readonly)
    [ -f "$dir/main.go" ] || fail "$hosts_snapshot has no $pkg/main.go"
  fi
  (cd "$dir" && nice -n 10 "$go_bin" build "${modflags[@]}" -trimpath \
    -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$version" \
    -o "$staging/$name" "$target") ||
    fail "go build of $pkg failed (see the compiler output above)"
  mv "$staging/$name" "$bin/$name"
  echo "$version" >"$bin/.$name.version"
  echo "install.sh: built $name in $(($(date +%s) - t0)) s"
done

shim_src="$hosts_src/sdk/python/cmd/pulumi-language-python-exec"
[ -f "$shim_src" ] || fail "$hosts_snapshot has no sdk/python/cmd/pulumi-language-python-exec"
install -m 755 "$shim_src" "$exec_shim"

got=$("$bin/pulumi" version)
[ "$got" = "$cli_version" ] || fail "$bin/pulumi version printed '$got', expected $cli_version"
echo "install.sh: pulumi $got, pulumi-language-nodejs and pulumi-language-python $host_version"
echo "install.sh: done in $(elapsed) s"
echo "$bin"
