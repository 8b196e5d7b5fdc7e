#!/usr/bin/env bash
# Builds the real Command provider plugin, `pulumi-resource-command`, at exactly the version of
# @pulumi/command that package-lock.json pins, for the engine tier that runs `AgentHost`
# (src/components/agent-host.ts) through the real provider. Its Go module
# (github.com/pulumi/pulumi-command/provider) is refused by the Go module proxy here, so it is built
# from the verified source snapshot (test/env/sources.sh); its dependencies come from the proxy as
# go.sum pins them. Idempotent: nothing is rebuilt when the stamp names the same snapshot.
#
# Not in the one module graph the other Go-built tools share (test/env/k8s; docs/testing-cluster.md,
# "One module graph for the Go-built tools"): its github.com/pulumi/pulumi-go-provider v1.3.0 (the
# only version the proxy here serves) does not compile against the Pulumi SDK v3.248.0 that graph
# selects for pulumi-kubernetes (middleware/schema/schema.go:351: cannot use prov (schema.ResourceSpec)
# as *schema.ResourceSpec); it builds with its own go.mod's v3.224.0.
#
#   bash test/pulumi/install-command.sh       # build what is missing, print the plugin directory
#
# Cold: ~7 min on 2 busy cores (load average 15), its dependencies fetched through the proxy.
#
# Layout: the Pulumi plugin-cache layout, so a PULUMI_HOME/plugins that holds this directory makes
# the engine find the plugin for the exact version the SDK asks for, without downloading:
#   $PULUMI_LVM_CACHE/pulumi-command/<version>/plugins/resource-command-v<version>/pulumi-resource-command
#   $PULUMI_LVM_CACHE/go/{build,mod}    GOCACHE / GOMODCACHE, shared with the other Go builds
set -euo pipefail

start=$(date +%s)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

fail() {
  echo "" >&2
  echo "############################################################" >&2
  echo "test/pulumi/install-command.sh FAILED: $*" >&2
  echo "############################################################" >&2
  exit 1
}
trap 'fail "command failed (exit $?) at line $LINENO: $BASH_COMMAND"' ERR

# The provider's version: the snapshot's tag, and it must be the @pulumi/command the package locks
# (the engine asks for exactly the SDK's version and takes no other).
version=1.2.1
snapshot="pulumi-command-v$version.tar.gz"
locked=$(node -p 'require(process.argv[1]).packages["node_modules/@pulumi/command"]?.version ?? ""' \
  "$repo/package-lock.json")
[ "$locked" = "$version" ] ||
  fail "package-lock.json has @pulumi/command '$locked', but this script builds the plugin $version (the snapshot's version); pin the package to exactly $version (docs/components.md)"

cache="${PULUMI_LVM_CACHE:-$HOME/.cache/pulumi-lvm}"
root="$cache/pulumi-command/$version"
plugin_dir="$root/plugins/resource-command-v$version"
plugin="$plugin_dir/pulumi-resource-command"
mkdir -p "$root/plugins"

# shellcheck source=../env/sources.sh
source "$repo/test/env/sources.sh"
# shellcheck source=../env/go-build.sh
source "$repo/test/env/go-build.sh"
want_stamp="snapshot $(snapshot_sha256 "$snapshot")"
exit_if_built install-command.sh "pulumi-resource-command $version" "$plugin_dir" pulumi-resource-command "$want_stamp"

go_toolchain "$cache" || fail "no Go toolchain to build with"

# Built in a staging directory and moved into place only on success, so an interrupted build never
# leaves a plugin that a re-run would take as done.
staging=$(mktemp -d "$root/.build.XXXXXX")
cleanup() { rm -rf "$staging"; }
trap cleanup EXIT
echo "install-command.sh: building pulumi-resource-command $version with $("$go_bin" version) in $staging"
echo "install-command.sh: GOCACHE=$GOCACHE GOMODCACHE=$GOMODCACHE load: $(cut -d' ' -f1-3 /proc/loadavg)"

src=$(unpack_snapshot "$snapshot" "$root/snapshot")
ldflags="-s -w -X github.com/pulumi/pulumi-command/provider/pkg/version.Version=$version"
t0=$(date +%s)
(cd "$src/provider" && nice -n 10 "$go_bin" build -trimpath -ldflags "$ldflags" \
  -o "$staging/pulumi-resource-command" ./cmd/pulumi-resource-command) ||
  fail "go build of ./cmd/pulumi-resource-command failed (see the go output above)"
echo "install-command.sh: built pulumi-resource-command in $(($(date +%s) - t0)) s, load: $(cut -d' ' -f1-3 /proc/loadavg)"

# The version is linked in (-X .../pkg/version.Version): the plugin reports it to the engine, which
# runs it only for an SDK asking for exactly that version (the plugin-cache directory name).
install_stamped "$staging" pulumi-resource-command "$plugin_dir" "$want_stamp" ||
  fail "cannot move pulumi-resource-command into $plugin_dir"
echo "install-command.sh: pulumi-resource-command $version, $(du -m "$plugin" | awk '{ print $1 }') MB, done in $(($(date +%s) - start)) s"
echo "$plugin_dir"
