#!/usr/bin/env bash
# Builds the real Kubernetes provider plugin, `pulumi-resource-kubernetes`, at exactly the version
# of @pulumi/kubernetes that package-lock.json pins, for the engine tier that runs Kubernetes
# resources through the real provider (test/pulumi/kubernetes-e2e.test.ts). Its Go module
# (github.com/pulumi/pulumi-kubernetes/provider/v4) is refused by the Go module proxy here, so it is
# built from the verified source snapshot (test/env/sources.sh) with this repository's patch
# (test/pulumi/kubernetes/pulumi-kubernetes-v<version>.patch: go.mod/go.sum that resolve with
# today's proxy, pinned; the .NET generator dropped; the generator never downloads), inside the one
# module graph all Go-built test tools share (test/env/k8s, test/env/go-build.sh `tools_module`):
# its k8s.io/*, helm, grpc, Pulumi SDK ... packages are the ones the control plane, the cluster
# tier's tools and the Command plugin were compiled with, so a cold build compiles only what is
# the provider's own (docs/testing-cluster.md, "One module graph for the Go-built tools").
# Idempotent: nothing is rebuilt when the stamp names the same snapshot, patch, specs and module.
#
#   bash test/pulumi/install-kubernetes.sh       # build what is missing, print the plugin directory
#
# Steps:
#   1. the shared tools module, with the snapshot unpacked and patched in its src/;
#   2. the Kubernetes OpenAPI specs the schema is generated from: api/openapi-spec/swagger.json of
#      the k8s.io/kubernetes module at the Makefile's KUBE_VERSION and at each legacy version the
#      generator merges (fetched with `go mod download`, verified by the checksum database), placed
#      at provider/pkg/gen/openapi-specs/swagger-v<X>.json so the generator downloads nothing;
#   3. build pulumi-gen-kubernetes and run `pulumi-gen-kubernetes schema` (provider/cmd/
#      pulumi-resource-kubernetes/schema.json), then the repository's own `go generate` step that
#      embeds it with the version;
#   4. build pulumi-resource-kubernetes (-trimpath, -s -w, version 4.32.0 linked in).
#
# Layout: the Pulumi plugin-cache layout, so a PULUMI_HOME/plugins that holds this directory makes
# the engine find the plugin for the exact version the SDK asks for, without downloading:
#   $PULUMI_LVM_CACHE/pulumi-kubernetes/<version>/plugins/resource-kubernetes-v<version>/pulumi-resource-kubernetes
#   $PULUMI_LVM_CACHE/go/{build,mod}    GOCACHE / GOMODCACHE, shared with the other Go builds
set -euo pipefail

start=$(date +%s)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

fail() {
  echo "" >&2
  echo "############################################################" >&2
  echo "test/pulumi/install-kubernetes.sh FAILED: $*" >&2
  echo "############################################################" >&2
  exit 1
}
trap 'fail "command failed (exit $?) at line $LINENO: $BASH_COMMAND"' ERR

# The provider's version: the snapshot's tag, and it must be the @pulumi/kubernetes the package
# locks (the engine asks for exactly the SDK's version and takes no other).
version=4.32.0
snapshot="pulumi-kubernetes-v$version.tar.gz"
patch_file="$here/kubernetes/pulumi-kubernetes-v$version.patch"
locked=$(node -p 'require(process.argv[1]).packages["node_modules/@pulumi/kubernetes"]?.version ?? ""' \
  "$repo/package-lock.json")
[ "$locked" = "$version" ] ||
  fail "package-lock.json has @pulumi/kubernetes '$locked', but this script builds the plugin $version (the snapshot's version); pin the package to exactly $version (docs/components.md)"

# The Kubernetes OpenAPI spec the schema is generated from (the Makefile's KUBE_VERSION), and the
# older specs pulumi-gen-kubernetes merges under it (its main.go lists them) for removed APIs.
kube_version=v1.36.1
legacy_versions=(v1.17.0 v1.18.0 v1.19.0 v1.20.0 v1.26.0 v1.28.0 v1.30.0 v1.31.0)

cache="${PULUMI_LVM_CACHE:-$HOME/.cache/pulumi-lvm}"
root="$cache/pulumi-kubernetes/$version"
plugin_dir="$root/plugins/resource-kubernetes-v$version"
plugin="$plugin_dir/pulumi-resource-kubernetes"
mkdir -p "$root/plugins"

# shellcheck source=../env/sources.sh
source "$repo/test/env/sources.sh"
# shellcheck source=../env/go-build.sh
source "$repo/test/env/go-build.sh"
[ "$repo/${tool_patches[pulumi-kubernetes-v$version]:-}" = "$patch_file" ] ||
  fail "test/env/go-build.sh does not apply $patch_file to the snapshot (tool_patches)"
want_stamp="snapshot $(snapshot_sha256 "$snapshot") patch $(sha256sum "$patch_file" | awk '{ print $1 }') kube $kube_version legacy ${legacy_versions[*]} module $(cat "$repo/test/env/k8s/go.mod" "$repo/test/env/k8s/go.sum" | sha256sum | awk '{ print $1 }')"
exit_if_built install-kubernetes.sh "pulumi-resource-kubernetes $version" "$plugin_dir" pulumi-resource-kubernetes "$want_stamp"

go_toolchain "$cache" || fail "no Go toolchain to build with"

# Everything is built in a staging directory and moved into place only on success, so an
# interrupted build never leaves a plugin that a re-run would take as done.
staging=$(mktemp -d "$root/.build.XXXXXX")
cleanup() {
  # The scratch module cache of step 2 is read-only as go leaves it.
  [ -d "$staging" ] && chmod -R u+w "$staging" 2>/dev/null
  rm -rf "$staging"
}
trap cleanup EXIT
echo "install-kubernetes.sh: building pulumi-resource-kubernetes $version with $("$go_bin" version) in $staging"
echo "install-kubernetes.sh: GOCACHE=$GOCACHE GOMODCACHE=$GOMODCACHE load: $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. The patched source tree, inside the shared tools module (the generated schema is written there).
tools=$(tools_module "$cache" "$repo") || fail "cannot prepare the shared tools module (test/env/k8s) in $cache/go/tools"
src="$tools/src/pulumi-kubernetes-v$version"
[ -d "$src/provider" ] || fail "test/env/k8s/go.mod does not build pulumi-kubernetes from the snapshot $snapshot ($src)"
require_module_version "$tools" github.com/pulumi/pulumi-kubernetes/provider/v4 "v$version" ||
  fail "pulumi-kubernetes is not at $version in test/env/k8s/go.mod"
grep -q "^KUBE_VERSION *?= *$kube_version\$" "$src/Makefile" ||
  fail "the snapshot's Makefile does not name KUBE_VERSION $kube_version; update kube_version here"

# 2. The OpenAPI specs, from the k8s.io/kubernetes module zips (cached: they never change).
specs="$root/openapi-specs"
mkdir -p "$specs"
for v in "$kube_version" "${legacy_versions[@]}"; do
  [ -s "$specs/swagger-$v.json" ] && continue
  t0=$(date +%s)
  # A scratch module cache: the k8s.io/kubernetes trees (~250 MB each) are not kept; only the spec is.
  dir=$(cd "$staging" && GOFLAGS=-modcacherw GOMODCACHE="$staging/specmod" GONOSUMDB= \
    "$go_bin" mod download -json "k8s.io/kubernetes@$v" | node -e '
      let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
        const m = JSON.parse(s);
        if (m.Error || !m.Dir) { console.error(m.Error || "no Dir in go mod download output"); process.exit(1); }
        process.stdout.write(m.Dir);
      });') || fail "go mod download k8s.io/kubernetes@$v failed"
  [ -s "$dir/api/openapi-spec/swagger.json" ] || fail "k8s.io/kubernetes@$v has no api/openapi-spec/swagger.json"
  cp "$dir/api/openapi-spec/swagger.json" "$specs/.swagger-$v.json.tmp"
  mv "$specs/.swagger-$v.json.tmp" "$specs/swagger-$v.json"
  chmod -R u+w "$staging/specmod" && rm -rf "$staging/specmod"
  echo "install-kubernetes.sh: spec $v from the k8s.io/kubernetes module ($(($(date +%s) - t0)) s)"
done
mkdir -p "$src/provider/pkg/gen/openapi-specs"
cp "$specs"/swagger-v*.json "$src/provider/pkg/gen/openapi-specs/"

ldflags="-s -w -X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=$version"
build() { # <package, or a file of the snapshot> <output>
  local t0
  t0=$(date +%s)
  (cd "$tools" && nice -n 10 "$go_bin" build -trimpath -ldflags "$ldflags" -o "$2" "$1") ||
    fail "go build of $1 failed (see the compiler output above)"
  echo "install-kubernetes.sh: built $(basename "$2") in $(($(date +%s) - t0)) s"
}

# 3. The schema, by the repository's own generator (downloads disabled: every spec is in place).
cmd=github.com/pulumi/pulumi-kubernetes/provider/v4/cmd
build "$cmd/pulumi-gen-kubernetes" "$staging/pulumi-gen-kubernetes"
PULUMI_LVM_NO_DOWNLOAD=1 "$staging/pulumi-gen-kubernetes" schema \
  "$src/provider/pkg/gen/openapi-specs/swagger-$kube_version.json" "$src" ||
  fail "pulumi-gen-kubernetes schema failed"
schema="$src/provider/cmd/pulumi-resource-kubernetes/schema.json"
# Upstream's schema.json at v4.32.0 (its git tree entry): generated here, it must be byte-identical.
schema_blob=9c927da9e707c7d50af9adc020d66c245cddf94e
got_blob=$(git hash-object "$schema")
[ "$got_blob" = "$schema_blob" ] ||
  fail "the generated schema.json (git blob $got_blob) differs from upstream's v$version schema.json ($schema_blob)"
echo "install-kubernetes.sh: schema.json $(wc -c <"$schema") bytes, identical to upstream's (git blob $schema_blob)"
# The repository's `go run ./generate.go`, built in the shared module graph (its Pulumi SDK packages
# are the provider's) and run where go run would run it.
build "./src/pulumi-kubernetes-v$version/provider/cmd/pulumi-resource-kubernetes/generate.go" "$staging/embed-schema"
(cd "$src/provider/cmd/pulumi-resource-kubernetes" && VERSION="$version" "$staging/embed-schema") ||
  fail "embedding the schema (provider/cmd/pulumi-resource-kubernetes/generate.go) failed"

# 4. The provider.
build "$cmd/pulumi-resource-kubernetes" "$staging/pulumi-resource-kubernetes"

install_stamped "$staging" pulumi-resource-kubernetes "$plugin_dir" "$want_stamp" ||
  fail "cannot move pulumi-resource-kubernetes into $plugin_dir"
echo "install-kubernetes.sh: pulumi-resource-kubernetes $version, $(du -m "$plugin" | awk '{ print $1 }') MB, done in $(($(date +%s) - start)) s"
echo "$plugin_dir"
