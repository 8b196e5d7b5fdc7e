#!/usr/bin/env bash
# The agent bundle AgentHost copies to a bare host (docs/components.md#agenthost): the pulumi-lvm
# package as `npm pack` makes it (compiled dist/), plus its production dependencies (node-forge,
# pino, prom-client, yaml, zod; all plain JavaScript, so one bundle runs on any host with
# Node.js >= 20, whatever its CPU), installed exactly as package-lock.json pins them. No peer
# dependencies (@pulumi/*: the agent does not use them). Reproducible: the same sources and lock
# give the same bytes, so the bundle's sha256 (AgentHost's upgrade trigger) changes only with them.
#
#   bash scripts/agent-bundle.sh [out.tgz]     # default: ./pulumi-lvm-agent-<version>.tgz
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=$(node -p 'require(process.argv[1]).version' "$repo/package.json")
out=$(realpath -m "${1:-$PWD/pulumi-lvm-agent-$version.tgz}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# npm pack runs `prepare` (compiles when dist/ is stale) and takes exactly package.json's "files".
(cd "$repo" && npm pack --silent --pack-destination "$work" >/dev/null)
tar -xzf "$work/pulumi-lvm-$version.tgz" -C "$work"
cp "$repo/package-lock.json" "$work/package/"
(cd "$work/package" && npm ci --omit=dev --omit=peer --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
rm -f "$work/package/package-lock.json"
[ -f "$work/package/dist/src/cli/main.js" ] || { echo "agent-bundle.sh: the package has no dist/src/cli/main.js" >&2; exit 1; }
[ -f "$work/package/node_modules/node-forge/package.json" ] || { echo "agent-bundle.sh: node-forge was not installed" >&2; exit 1; }
[ ! -e "$work/package/node_modules/@pulumi" ] || { echo "agent-bundle.sh: peer dependencies were installed" >&2; exit 1; }

tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$work" -cf - package | gzip -n -9 >"$out.tmp"
mv "$out.tmp" "$out"
echo "agent-bundle.sh: $out ($(du -k "$out" | awk '{ print $1 }') KiB, sha256 $(sha256sum "$out" | awk '{ print $1 }'))" >&2
echo "$out"
