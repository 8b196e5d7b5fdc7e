#!/usr/bin/env bash
# `npm test` (after its pretest, test/setup.sh): every tier, in two lanes on the machine's two cores
# (docs/testing-cluster.md, "CI budget"):
#
#   host lane   unit + integration (jest.config.js's projects: loop devices, a real kube-apiserver,
#               the real engine), then the Kubernetes provider's tier (jest.kubernetes.config.js)
#   guest lane  first the real-kernel tier (jest.vm.config.js: the agent in a qemu guest, its
#               conformance and smoke tests) and bare hosts over SSH into a qemu guest
#               (jest.bare-hosts.config.js), beside the unit and integration tests; then the real
#               cluster in a qemu guest (jest.config.js's cluster project), started once the host
#               lane's unit and integration tests are done, beside the Kubernetes tier (no guest);
#               then the user's journey (test/journey: examples/quickstart with
#               the real engine and Kubernetes provider on the same kind of node), alone once both
#               the cluster tier and the host lane are done
#
# The lanes are balanced by what they cost (docs/testing-cluster.md, "CI budget"); no qemu guest runs
# beside an emulated Kubernetes node. The two emulated Kubernetes nodes (the cluster tier's, then
# the journey's) never run beside the unit and integration tests, nor beside each other: starved
# there, TopoLVM's steps timed out and the journey's operator lost its leader Lease over and over.
#
# What only the later tiers need (openssh-server's binaries aside, which test/setup.sh installs) is
# built by test/setup-late.sh, started here in the background while the host lane's tests run: the
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
  say "$name: jest $*${NICE:+ (nice $NICE)}"
  nice -n "${NICE:-0}" npx jest "$@" --json --outputFile="$reports/$name.json" || true
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
  touch "$reports/host-tests.done"
  # Niced: it runs beside the cluster tier, whose emulated node must get the cores first (its
  # probes and CSI calls have deadlines; this tier's steps wait up to 30 minutes).
  if await_ready kubernetes; then
    NICE=5 run_jest kubernetes -c jest.kubernetes.config.js --runInBand
  fi
  touch "$reports/host-lane.done"
) 2>&1 | tag host &
host=$!

(
  # First the real-kernel tier, beside the host lane's unit and integration tests: it needs nothing
  # from setup-late.sh, and its guest (one core, lvm and the agent under TCG, generous step timeouts)
  # is no Kubernetes node to starve. Not beside the cluster tier's node: there (2026-12-07) the node
  # took 431 s to be Ready instead of 140 s and TopoLVM's pods never got Ready in 600 s.
  run_jest vm -c jest.vm.config.js --runInBand
  # Then bare hosts (an sshd in a qemu guest), still beside the host lane's tests: not beside the
  # cluster tier, whose node starved beside it (2026-12-07: at host load 5-6 with bare hosts and the
  # Kubernetes tier beside it, lvmd's health check timed out, topolvm-node restarted, CreateVolume
  # hit its deadline and the PVC stayed Pending; two CI runs in a row lost the cluster tier so).
  if await_ready command; then
    run_jest bare-hosts -c jest.bare-hosts.config.js --runInBand
  fi
  # The cluster tier: not beside the host lane's unit and integration tests: with them (and a qemu guest) on
  # the two cores, the emulated node starved, and three CI runs in a row failed in a different
  # TopoLVM step each (an install timeout, an LV removal, csi-sanity). Beside the Kubernetes tier
  # (no guest) it runs as it does alone.
  while [ ! -e "$reports/host-tests.done" ] && kill -0 "$host" 2>/dev/null; do sleep 5; done
  if await_ready cluster; then
    run_jest cluster --selectProjects cluster --runInBand
  fi
  # Then the user's journey, alone: not beside another emulated node, nor beside the host lane (its
  # operator lost the leader Lease over and over there, 2026-11-27). It needs the cluster's binaries
  # and the Kubernetes provider plugin.
  while [ ! -e "$reports/host-lane.done" ] && kill -0 "$host" 2>/dev/null; do sleep 5; done
  if await_ready cluster && await_ready kubernetes; then
    run_jest journey -c jest.journey.config.js --runInBand
  fi
) 2>&1 | tag guest &
guest=$!

status=0
wait "$late" || status=1
wait "$host" || status=1
wait "$guest" || status=1
late_status=$(cat "$reports/setup-late.status" 2>/dev/null || echo none)
say "lanes finished (test/setup-late.sh's status: $late_status)"
[ "$late_status" = 0 ] || status=1
node test/summary.js "$reports" host vm kubernetes bare-hosts cluster journey || status=1
exit "$status"
