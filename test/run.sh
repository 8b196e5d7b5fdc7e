#!/usr/bin/env bash
# `npm test` (after its pretest, test/setup.sh): every tier, in two lanes on the machine's two cores
# (docs/testing-cluster.md, "CI budget"):
#
#   lane a   unit + integration (jest.config.js's projects: loop devices, a real kube-apiserver, the
#            real engine), then bare hosts over SSH into a qemu guest (jest.bare-hosts.config.js)
#   lane b   the real-kernel tier (jest.vm.config.js: the agent in a qemu guest, its conformance and
#            smoke tests), then the Kubernetes provider's tier (jest.kubernetes.config.js: the real
#            engine and Kubernetes provider against a real kube-apiserver); once lane a is done, the
#            real cluster in a qemu guest (jest.config.js's cluster project), then the user's journey
#            (test/journey: examples/quickstart with the real engine and Kubernetes provider on the
#            same kind of node)
#
# The two emulated Kubernetes nodes (the cluster tier's, then the journey's) run last and alone: not
# beside each other, a qemu guest or any other tier. Every time something ran beside one, its
# probes timed out and its pods restarted, and the restarts kept it loaded after the other work had
# ended (three runs in a row lost a different TopoLVM step each; the journey's operator lost its
# leader Lease over and over). The rest is balanced over the two lanes by what it costs.
#
# What only the later tiers need (openssh-server's binaries aside, which test/setup.sh installs) is
# built by test/setup-late.sh, started here in the background while the first tests run: the
# Command provider plugin, then the cluster's binaries, then the Kubernetes provider plugin. Each
# tier waits for exactly what it needs, so on a cold cache the Go builds overlap the tests that do
# not need them; on a warm cache setup-late.sh finishes in seconds. A tier whose build failed fails
# (its report is missing and the run says why): nothing is skipped.
#
# Each lane's output goes to the terminal with its lane's name in front of every line, and each
# jest run writes a JSON report; test/summary.js reads them all at the end and fails the run when
# any test failed, any report is missing, or no test ran.
#
# `npm test -- <jest args>` runs plain `jest <args>` instead (e.g. `npm test -- src/planner`).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then exec npx jest "$@"; fi

reports="${PULUMI_LVM_TEST_REPORTS:-$(mktemp -d -t pulumi-lvm-reports-XXXXXX)}"
mkdir -p "$reports"
rm -f "$reports"/*.json "$reports"/*.ready "$reports"/*.done "$reports"/setup-late.status
t0=$(date +%s)
export PULUMI_LVM_SETUP_LATE_MARKS="$reports"
# Every line with its lane and the seconds since the run started. sed -u: a lane's lines appear as
# they are written. Not `| head`-like: sed reads all of its input, so no lane dies of SIGPIPE.
tag() { sed -u "s/^/[$1] /"; }
say() { echo "[run $(($(date +%s) - t0))s] $*"; }

# Waits until setup-late.sh has marked <what> ready; returns 1 (saying why) when it ended without
# doing so (a failed build: its own output says which).
await_ready() {
  local what=$1
  while [ ! -e "$reports/$what.ready" ]; do
    if [ -e "$reports/setup-late.status" ]; then
      [ -e "$reports/$what.ready" ] && return 0
      say "test/setup-late.sh ended with status $(cat "$reports/setup-late.status") before $what was built: its tier cannot run"
      return 1
    fi
    sleep 5
  done
}

# One jest run of a lane: its JSON report is <name>.json; a failing run does not stop the lane (the
# summary counts it), a missing report does.
run_jest() {
  local name=$1
  shift
  say "$name: jest $*"
  npx jest "$@" --json --outputFile="$reports/$name.json" || true
  say "$name: done"
}

(
  status=0
  bash test/setup-late.sh || status=$?
  echo "$status" >"$reports/setup-late.status"
  exit "$status"
) 2>&1 | tag setup-late &
late=$!

(
  # Two workers, not jest's default of one on two cores: most of these tests wait on processes they
  # started (an apiserver, an operator, a lease running out). Measured on this machine kind: 935 s
  # with two against ~1,400 s with one, all 3,079 tests green at load 2-3.
  run_jest host --selectProjects unit integration --maxWorkers=2
  # Then bare hosts (an sshd in a qemu guest, no Kubernetes node), beside the other lane's
  # Kubernetes tier.
  if await_ready command; then
    run_jest bare-hosts -c jest.bare-hosts.config.js --runInBand
  fi
  touch "$reports/lane-a.done"
) 2>&1 | tag a &
lane_a=$!

(
  # First the real-kernel tier, beside the unit and integration tests: it needs nothing from
  # setup-late.sh, and its guest (one core, lvm and the agent under TCG, generous step timeouts) is
  # no Kubernetes node to starve.
  run_jest vm -c jest.vm.config.js --runInBand
  # Then the Kubernetes provider's tier (the real engine against a real kube-apiserver, no guest),
  # beside the rest of the unit and integration tests and then bare hosts.
  if await_ready kubernetes; then
    run_jest kubernetes -c jest.kubernetes.config.js --runInBand
  fi
  # The two emulated Kubernetes nodes last, one after the other, each with the machine to itself:
  # alone, the cluster tier's node installed TopoLVM in 61 s, ran a thick PVC's writer in 45 s and
  # csi-sanity's subset in 274 s (2026-12-07); beside the Kubernetes tier in CI the same steps took
  # 295, 188 and 712 s, probes timed out, pods restarted and the restarts kept the node loaded
  # after the tier beside it had ended.
  while [ ! -e "$reports/lane-a.done" ] && kill -0 "$lane_a" 2>/dev/null; do sleep 5; done
  if await_ready cluster; then
    run_jest cluster --selectProjects cluster --runInBand
  fi
  # The user's journey needs the cluster's binaries and the Kubernetes provider plugin.
  if await_ready cluster && await_ready kubernetes; then
    run_jest journey -c jest.journey.config.js --runInBand
  fi
) 2>&1 | tag b &
lane_b=$!

status=0
wait "$late" || status=1
wait "$lane_a" || status=1
wait "$lane_b" || status=1
late_status=$(cat "$reports/setup-late.status" 2>/dev/null || echo none)
say "lanes finished (test/setup-late.sh's status: $late_status)"
[ "$late_status" = 0 ] || status=1
node test/summary.js "$reports" host vm kubernetes bare-hosts cluster journey || status=1
exit "$status"
