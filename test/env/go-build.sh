#!/usr/bin/env bash
# Go builds of the test tools, as every install script does them: the same toolchain lookup, caches
# and module pinning; one module graph for all tools (tools_module); and, for the provider plugins
# (test/pulumi/install-command.sh, test/pulumi/install-kubernetes.sh), one stamp that names the
# build's inputs, so a re-run with the same inputs returns at once and a changed input builds again.
#
# Source it, then:
#   tools_module <cache dir> <repo dir>
#                                     prints the directory every Go-built tool is built in: the
#                                     wrapper module test/env/k8s (go.mod, go.sum, tools.go) beside
#                                     src/ holding the verified source snapshots its replace
#                                     directives name (test/env/sources.sh), each with its patch
#                                     (tool_patches below) applied. Made once per inputs (a stamp
#                                     names them), in a staging directory moved into place whole,
#                                     at <cache dir>/go/tools. One module graph: a library shared by
#                                     several tools is compiled once, at one version, for all of them
#                                     (docs/testing-cluster.md, "One module graph for the Go-built
#                                     tools"), and go.<tool>.mod for each tool_variants entry below.
#                                     Needs go_toolchain first.
#   require_module_version <tools dir> <module> <version>
#                                     returns 1 (saying why) unless the module graph of <tools dir>
#                                     selects exactly <version> of <module>: a tool's version is its
#                                     pin, whatever another tool in the graph asks for
#   go_toolchain <cache dir>          sets go_bin (go on PATH, else /usr/local/go/bin/go) and exports
#                                     GOCACHE / GOMODCACHE (<cache dir>/go/{build,mod}, shared with
#                                     the other Go builds), GOTOOLCHAIN=local, CGO_ENABLED=0, GOGC, the
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
  # The compiler and linker with less garbage collection (GOGC=400, not 100): the cold build of
  # kube-apiserver, alone on 2 cores, took 284 s instead of 401 (user CPU 459 s instead of 589), with
  # the same peak RSS (2.4-2.5 GB, the linker's). The biggest lever on a cold CI run, which is mostly
  # Go builds on two cores.
  export GOGC=400
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

# The one exception to the single graph, by tool: its go.mod is the graph's plus these replace
# directives, written by tools_module as go.<tool>.mod (+ go.<tool>.sum, a copy of go.sum, which
# pins the replacements too); build with -modfile=go.<tool>.mod. Every package that imports none of
# the replaced modules is the shared graph's own, compiled once.
#   topolvm: TopoLVM v0.41.0 uses csi.VolumeCondition, which the CSI spec v1.13.0 the graph selects
#   (csi-test v5.6.0 requires it) no longer has ("unknown field VolumeCondition in struct literal of
#   type csi.NodeGetVolumeStatsResponse", internal/driver/node.go:456); v1.12.0 is its sidecars'.
declare -A tool_variants=(
  [topolvm]="github.com/container-storage-interface/spec=github.com/container-storage-interface/spec@v1.12.0"
)

# The patch of each snapshot that needs one to resolve against today's Go module proxy, by the
# snapshot's directory under src/ (relative to the repository).
declare -A tool_patches=(
  [pulumi-kubernetes-v4.32.0]=test/pulumi/kubernetes/pulumi-kubernetes-v4.32.0.patch
)

tools_module() {
  local cache="$1" repo="$2" mod="$2/test/env/k8s" dir="$1/go/tools" staging snap patch stamp top variant r
  local -a snaps
  # shellcheck source=sources.sh
  declare -F unpack_snapshot >/dev/null || source "$repo/test/env/sources.sh" || return 1
  # The snapshots: every `=> ./src/<name>-<tag>[/sub]` replace target of go.mod.
  mapfile -t snaps < <(awk '$2 == "=>" && $3 ~ /^\.\/src\// { split($3, p, "/"); print p[3] }
    $1 == "replace" && $3 == "=>" && $4 ~ /^\.\/src\// { split($4, p, "/"); print p[3] }' "$mod/go.mod" | sort -u)
  if [ "${#snaps[@]}" -eq 0 ]; then
    echo "go-build.sh: no ./src/ replace directives in $mod/go.mod" >&2
    return 1
  fi
  stamp=$(
    cd "$mod" && sha256sum go.mod go.sum tools.go || exit 1
    for snap in "${snaps[@]}"; do
      echo "$snap $(snapshot_sha256 "$snap.tar.gz")" || exit 1
      patch="${tool_patches[$snap]:-}"
      [ -z "$patch" ] || sha256sum "$repo/$patch" | awk '{ print $1 }' || exit 1
    done
    for variant in "${!tool_variants[@]}"; do echo "$variant ${tool_variants[$variant]}"; done
  ) || return 1
  stamp=$(echo "$stamp" | sha256sum | awk '{ print $1 }')
  if [ -f "$dir/go.mod" ] && [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "$dir"
    return 0
  fi
  mkdir -p "$cache/go" || return 1
  staging=$(mktemp -d "$cache/go/.tools.XXXXXX") || return 1
  # Every step is checked here: a caller's `|| fail` turns errexit off inside the function.
  if ! cp "$mod/go.mod" "$mod/go.sum" "$mod/tools.go" "$staging/"; then
    rm -rf "$staging"
    return 1
  fi
  for variant in "${!tool_variants[@]}"; do
    if ! { cp "$mod/go.mod" "$staging/go.$variant.mod" && cp "$mod/go.sum" "$staging/go.$variant.sum" &&
      (cd "$staging" && for r in ${tool_variants[$variant]}; do "$go_bin" mod edit -replace="$r" "go.$variant.mod" || exit 1; done); }; then
      echo "go-build.sh: cannot write go.$variant.mod" >&2
      rm -rf "$staging"
      return 1
    fi
  done
  for snap in "${snaps[@]}"; do
    top=$(unpack_snapshot "$snap.tar.gz" "$staging/src") || { rm -rf "$staging"; return 1; }
    patch="${tool_patches[$snap]:-}"
    [ -n "$patch" ] || continue
    # GIT_CEILING_DIRECTORIES: plain-patch mode even if the cache lies inside some git work tree.
    if ! (cd "$top" && GIT_CEILING_DIRECTORIES="$staging" git apply --whitespace=nowarn "$repo/$patch"); then
      echo "go-build.sh: $repo/$patch does not apply to the snapshot $snap" >&2
      rm -rf "$staging"
      return 1
    fi
  done
  if ! { echo "$stamp" >"$staging/.stamp" && rm -rf "$dir" && mv "$staging" "$dir"; }; then
    rm -rf "$staging"
    return 1
  fi
  echo "$dir"
}

require_module_version() {
  local dir="$1" module="$2" want="$3" got
  got=$(cd "$dir" && "$go_bin" list -m -f '{{.Version}}' "$module") || {
    echo "go-build.sh: go list -m $module failed in $dir" >&2
    return 1
  }
  if [ "$got" != "$want" ]; then
    echo "go-build.sh: the module graph of $dir selects $module $got, but its pin is $want (another tool requires a higher version: update the pin or leave that tool out of test/env/k8s/go.mod)" >&2
    return 1
  fi
}
