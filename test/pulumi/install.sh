#!/usr/bin/env bash
# Installs the real Pulumi engine binaries that the engine end-to-end tier runs
# (test/pulumi/engine-e2e.test.ts), built from source through the Go module proxy by the wrapper
# modules in test/pulumi/go. Idempotent: binaries that already exist are not rebuilt.
#
#   bash test/pulumi/install.sh            # build what is missing, print the bin directory
#   PULUMI_LVM_CACHE=/some/dir bash test/pulumi/install.sh
#
# Layout (the version is the CLI's, from test/pulumi/go/cli/go.mod):
#   $PULUMI_LVM_CACHE/pulumi/<version>/bin/pulumi                          the CLI (engine, file backend)
#   $PULUMI_LVM_CACHE/pulumi/<version>/bin/pulumi-language-nodejs          the Node.js language host
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
host_version=$(mod_version "$here/go/nodejs/go.mod" github.com/pulumi/pulumi/sdk/v3)
[ -n "$host_version" ] || fail "cannot read the github.com/pulumi/pulumi/sdk/v3 version from $here/go/nodejs/go.mod"

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

# name -> "<wrapper module dir> <package path> <module version>". The language host comes from the
# sdk/v3 module: its own module is not served by the proxy here (see test/pulumi/go/nodejs/go.mod).
declare -A builds=(
  [pulumi]="$here/go/cli github.com/pulumi/pulumi/pkg/v3/cmd/pulumi $cli_version"
  [pulumi-language-nodejs]="$here/go/nodejs github.com/pulumi/pulumi/sdk/v3/nodejs/cmd/pulumi-language-nodejs $host_version"
)

# A binary is current when it exists and its stamp names the module version it was built from.
missing=()
for name in pulumi pulumi-language-nodejs; do
  read -r _ _ version <<<"${builds[$name]}"
  if [ ! -x "$bin/$name" ] || [ "$(cat "$bin/.$name.version" 2>/dev/null)" != "$version" ]; then
    missing+=("$name")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install.sh: pulumi $cli_version binaries already in $bin (nothing to build, $(elapsed) s)"
  echo "$bin"
  exit 0
fi

go_bin=$(command -v go || true)
[ -n "$go_bin" ] || { [ -x /usr/local/go/bin/go ] && go_bin=/usr/local/go/bin/go; } || true
[ -n "$go_bin" ] || fail "no Go toolchain found (looked in PATH and /usr/local/go/bin/go)"
command -v node >/dev/null || fail "no node on PATH (the language host and the plugin run it)"

export GOFLAGS=-mod=mod
export GOCACHE="$cache/go/build"
export GOMODCACHE="$cache/go/mod"
export GOTOOLCHAIN=local
export CGO_ENABLED=0
# The checksum database reachable here has no entry for pkg/v3 v3.248.0 nor sdk/v3 v3.68.0 (404),
# so it is not asked for these modules; the go.sum files of the wrapper modules pin their hashes,
# and go checks every download against them.
export GONOSUMDB=github.com/pulumi/pulumi
mkdir -p "$GOCACHE" "$GOMODCACHE"

echo "install.sh: building ${missing[*]} (pulumi $cli_version, language host from sdk $host_version) with $("$go_bin" version) into $bin"
echo "install.sh: GOCACHE=$GOCACHE GOMODCACHE=$GOMODCACHE"

# Build into a scratch directory and move into place only on success, so an interrupted
# build never leaves a binary that a re-run would take as done.
staging=$(mktemp -d "$bin/.build.XXXXXX")
trap 'rm -rf "$staging"' EXIT
for name in "${missing[@]}"; do
  read -r mod_dir pkg version <<<"${builds[$name]}"
  t0=$(date +%s)
  echo "install.sh: go build -o $name $pkg ($version)"
  (cd "$mod_dir" && "$go_bin" build -trimpath \
    -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$version" \
    -o "$staging/$name" "$pkg") ||
    fail "go build of $pkg failed (see the compiler output above)"
  mv "$staging/$name" "$bin/$name"
  echo "$version" >"$bin/.$name.version"
  echo "install.sh: built $name in $(($(date +%s) - t0)) s"
done

got=$("$bin/pulumi" version)
[ "$got" = "$cli_version" ] || fail "$bin/pulumi version printed '$got', expected $cli_version"
echo "install.sh: pulumi $got, pulumi-language-nodejs $host_version"
echo "install.sh: done in $(elapsed) s"
echo "$bin"
