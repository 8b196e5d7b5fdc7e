import { runCaptured } from "../../test/support/cli/captured-io";
import { ROLLOUT_RESUME_ANNOTATION } from "../api";
import { LVM_NODE_SETS } from "../kube/resources";
import { ClusterFake } from "../../test/support/kube/cluster-fake";
import type { FakeKube } from "../../test/support/kube/fake-kube";
import { run } from "./rollout";

function setWith(paused: boolean) {
  return {
    apiVersion: "lvm.topolvm.io/v2alpha1",
    kind: "LVMNodeSet",
    metadata: { name: "edge", namespace: "lvm-system", generation: 3 },
    spec: { template: { volumeGroups: [], deviceClasses: [] } },
    status: {
      conditions: [
        {
          type: "RolloutPaused",
          status: paused ? "True" : "False",
          reason: paused ? "NodeFailed" : "Resumed",
          message: paused ? "node n3 failed to apply it: pvcreate /dev/vdc exited 5" : "goes on",
          lastTransitionTime: "2026-12-07T00:00:00Z",
        },
      ],
    },
  };
}

const cli = (argv: string[], kube: ClusterFake) => runCaptured((io) => run(io, kube as never), argv);

const annotation = (kube: FakeKube) =>
  kube.peek(LVM_NODE_SETS, "lvm-system", "edge")?.metadata.annotations?.[ROLLOUT_RESUME_ANNOTATION];

test("a paused rollout: a new value of the resume annotation, found by the set's name; a second resume gives another value", async () => {
  const kube = new ClusterFake(LVM_NODE_SETS, [{ namespace: "lvm-system", name: "edge" }]);
  kube.put(LVM_NODE_SETS, setWith(true));
  const first = await cli(["resume", "--nodeset", "edge"], kube);
  expect(first).toMatchObject({ code: 0, stderr: "" });
  expect(first.stdout).toContain("LVMNodeSet lvm-system/edge");
  expect(first.stdout).toContain("node n3 failed to apply it");
  const value = annotation(kube);
  expect(value).toMatch(/^\d{4}-\d\d-\d\dT.+-[0-9a-f]{6}$/);
  expect((await cli(["resume", "--nodeset", "edge", "--namespace", "lvm-system"], kube)).code).toBe(0);
  expect(annotation(kube)).not.toBe(value);
});

test("not paused, or no such set: exit 1 with the reason, nothing written", async () => {
  const kube = new ClusterFake(LVM_NODE_SETS, [{ namespace: "lvm-system", name: "edge" }]);
  kube.put(LVM_NODE_SETS, setWith(false));
  const notPaused = await cli(["resume", "--nodeset", "edge"], kube);
  expect(notPaused).toMatchObject({ code: 1 });
  expect(notPaused.stderr).toContain("its rollout is not paused; nothing to resume");
  const missing = await cli(["resume", "--nodeset", "other"], kube);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain("no LVMNodeSet named other in any namespace");
  expect(kube.writes).toEqual([]);
});

test.each([
  [[]],
  [["resume"]],
  [["pause", "--nodeset", "edge"]],
  [["resume", "--nodeset", "edge", "--force"]],
])("usage error for %j: exit 2, nothing asked of the cluster", async (argv) => {
  const kube = new ClusterFake(LVM_NODE_SETS);
  const r = await cli(argv, kube);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("usage: pulumi-lvm rollout resume");
  expect(kube.calls).toEqual([]);
});
