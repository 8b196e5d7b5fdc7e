import { APPROVE_ANNOTATION } from "../api";
import { LVM_NODES } from "../kube/resources";
import { runCaptured } from "../../test/support/cli/captured-io";
import { ClusterFake } from "../../test/support/kube/cluster-fake";
import { APPROVE_USAGE, run } from "./approve";

const HASH = "sha256:9f2c";

function nodeWaiting(hash: string | undefined) {
  return {
    apiVersion: "lvm.topolvm.io/v2alpha1",
    kind: "LVMNode",
    metadata: { name: "n1", namespace: "lvm-system", generation: 2 },
    spec: { volumeGroups: [], deviceClasses: [] },
    status: hash
      ? {
          pendingApproval: {
            hash,
            policy: "Always",
            since: "2026-12-07T00:00:00Z",
            steps: [{ op: "pvcreate", command: "pvcreate /dev/vdc", device: "/dev/vdc" }],
          },
        }
      : {},
  };
}

const cli = (argv: string[], kube: ClusterFake) => runCaptured((io) => run(io, kube as never), argv);
const approval = (kube: ClusterFake) =>
  kube.peek(LVM_NODES, "lvm-system", "n1")?.metadata.annotations?.[APPROVE_ANNOTATION];

test("the waiting plan's hash: the annotation set to it, found by the node's name", async () => {
  const kube = new ClusterFake(LVM_NODES, [{ namespace: "lvm-system", name: "n1" }]);
  kube.put(LVM_NODES, nodeWaiting(HASH));
  const r = await cli(["--node", "n1", "--hash", ` ${HASH} `], kube);
  expect(r).toMatchObject({ code: 0, stderr: "" });
  expect(r.stdout).toContain(`approved plan ${HASH} of LVMNode lvm-system/n1 (1 step(s))`);
  expect(approval(kube)).toBe(HASH);
});

test("a stale hash, nothing waiting, no such node: exit 1 with the reason, nothing written", async () => {
  const kube = new ClusterFake(LVM_NODES, [{ namespace: "lvm-system", name: "n1" }]);
  kube.put(LVM_NODES, nodeWaiting(HASH));
  const stale = await cli(["--node", "n1", "--hash", "sha256:0000"], kube);
  expect(stale.code).toBe(1);
  expect(stale.stderr).toContain(`the hash sha256:0000 is stale: the plan waiting now is ${HASH}`);
  const missing = await cli(["--node", "n9", "--hash", HASH], kube);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain("n9");
  kube.put(LVM_NODES, nodeWaiting(undefined));
  const nothing = await cli(["--node", "n1", "--hash", HASH], kube);
  expect(nothing.code).toBe(1);
  expect(nothing.stderr).toContain("no plan waits for an approval");
  expect(kube.writes).toEqual([]);
});

test.each([
  [[], "--node and --hash are required"],
  [["--node", "n1"], "--node and --hash are required"],
  [["--node", "n1", "--hash"], "--hash needs a hash"],
  [["--node", "--hash", HASH], "--node needs a node"],
  [["--node", "n1", "--hash", HASH, "--force"], 'unknown argument "--force"'],
  [["--node", "n1", "--hash", HASH, "extra"], 'unexpected argument "extra"'],
])("usage error for %j: exit 2 naming it, nothing asked of the cluster", async (argv, message) => {
  const kube = new ClusterFake(LVM_NODES);
  const r = await cli(argv as string[], kube);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(`pulumi-lvm approve: ${message}`);
  expect(r.stderr).toContain(APPROVE_USAGE);
  expect(kube.calls).toEqual([]);
});

test("--help prints the usage, exit 0", async () => {
  const r = await cli(["--help"], new ClusterFake(LVM_NODES));
  expect(r).toMatchObject({ code: 0, stdout: APPROVE_USAGE });
});
