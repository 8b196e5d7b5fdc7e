import type { LVMNodeStatus } from "../../api";
import { lvmNodeStatus, RECONCILED } from "./status";
import type { LVMNodeObject } from "../types";

const T0 = Date.parse("2044-10-22T16:29:24Z");
const T1 = T0 + 60_000;

const AGENT: LVMNodeStatus = {
  state: "Ready",
  volumeGroups: [
    {
      name: "vg1",
      state: "Healthy",
      size: "252Mi",
      free: "252Mi",
      devices: {
        included: [{ kname: "/dev/loop3", id: "pv:abc", size: "126Mi" }],
        excluded: [{ kname: "/dev/loop9", reasons: ["has an xfs signature"] }],
      },
      volumes: [],
    },
  ],
  deviceClasses: [{ name: "thick", volumeGroup: "vg1", state: "Healthy" }],
  conditions: [
    {
      type: "VolumeGroupsHealthy",
      status: "True",
      reason: "Healthy",
      message: "1 volume group(s) healthy",
      lastTransitionTime: "2000-01-01T00:00:00Z",
    },
  ],
};

const node = (status?: LVMNodeStatus, generation = 3): LVMNodeObject =>
  ({
    metadata: { name: "n1", namespace: "storage", generation },
    spec: {},
    ...(status ? { status } : {}),
  }) as LVMNodeObject;
const condition = (s: LVMNodeStatus, type: string) => s.conditions?.find((c) => c.type === type);

test("synced: the agent's status, its conditions re-stamped with our generation and time", () => {
  const s = lvmNodeStatus(node(), { kind: "synced", pod: "lvm-system/a", applied: 2, status: AGENT }, T0);
  expect(s.state).toBe("Ready");
  expect(s.observedGeneration).toBe(3);
  expect(s.volumeGroups).toEqual(AGENT.volumeGroups);
  expect(s.deviceClasses).toEqual(AGENT.deviceClasses);
  expect(condition(s, "VolumeGroupsHealthy")).toEqual({
    type: "VolumeGroupsHealthy",
    status: "True",
    reason: "Healthy",
    message: "1 volume group(s) healthy",
    observedGeneration: 3,
    lastTransitionTime: "2044-10-22T16:29:24Z",
  });
  expect(condition(s, RECONCILED)).toMatchObject({ status: "True", reason: "Applied" });
});

test("reconciling the same finding again gives the same status (no write)", () => {
  const finding = { kind: "synced", pod: "lvm-system/a", applied: 0, status: AGENT } as const;
  const first = lvmNodeStatus(node(), finding, T0);
  expect(lvmNodeStatus(node(first), finding, T1)).toEqual(first);
});

test("transition times move only when a condition's status changes", () => {
  const ok = lvmNodeStatus(node(), { kind: "synced", pod: "lvm-system/a", applied: 0, status: AGENT }, T0);
  const down = lvmNodeStatus(node(ok), { kind: "unavailable", message: "node n1: no agent pod" }, T1);
  expect(condition(down, RECONCILED)).toMatchObject({
    status: "False",
    reason: "AgentUnavailable",
    lastTransitionTime: "2044-10-22T16:30:24Z",
  });
  // The agent's conditions were not re-reported: kept as they were.
  expect(condition(down, "VolumeGroupsHealthy")).toEqual(condition(ok, "VolumeGroupsHealthy"));
  const failedAgain = lvmNodeStatus(node(down), { kind: "failed", message: "node n1: HTTP 500" }, T1 + 5000);
  expect(condition(failedAgain, RECONCILED)).toMatchObject({
    reason: "AgentFailed",
    lastTransitionTime: "2044-10-22T16:30:24Z",
  });
});

test.each([
  [
    "unavailable after Ready -> Degraded, last report kept",
    { kind: "unavailable", message: "m" },
    "Ready",
    "Degraded",
  ],
  ["unavailable never reported -> Pending", { kind: "unavailable", message: "m" }, undefined, "Pending"],
  ["invalid -> Failed", { kind: "invalid", problems: ["spec.x: bad"] }, "Ready", "Failed"],
  [
    "teardown refused -> Terminating",
    { kind: "teardown", outcome: { kind: "refused", volumes: ["vg1/data"], message: "vg1/data remain" } },
    "Ready",
    "Terminating",
  ],
  ["failed without status -> Failed", { kind: "failed", message: "m" }, "Ready", "Failed"],
] as const)("%s", (_what, finding, before, after) => {
  const previous = before ? { ...AGENT, state: before } : undefined;
  const s = lvmNodeStatus(node(previous), finding as never, T0);
  expect(s.state).toBe(after);
  if (previous) expect(s.volumeGroups).toEqual(AGENT.volumeGroups);
});

test("InvalidSpec and TeardownRefused say why", () => {
  const invalid = lvmNodeStatus(
    node(),
    { kind: "invalid", problems: ["spec.volumeGroups[0].name: too long"] },
    T0,
  );
  expect(condition(invalid, RECONCILED)).toMatchObject({
    reason: "InvalidSpec",
    message: "the spec is invalid; nothing was sent to the agent: spec.volumeGroups[0].name: too long",
  });
  const refused = lvmNodeStatus(
    node(),
    {
      kind: "teardown",
      outcome: { kind: "refused", volumes: ["vg1/data"], message: "logical volumes vg1/data remain" },
    },
    T0,
  );
  expect(condition(refused, RECONCILED)).toMatchObject({
    reason: "TeardownRefused",
    message: "deletionPolicy Delete: logical volumes vg1/data remain",
  });
});

test("conditions of other owners stay", () => {
  const provider = {
    type: "ProviderReady",
    status: "True" as const,
    lastTransitionTime: "2044-01-01T00:00:00Z",
  };
  const s = lvmNodeStatus(node({ conditions: [provider] }), { kind: "invalid", problems: [] }, T0);
  expect(s.conditions?.[0]).toEqual(provider);
});

describe("Ready (the kstatus summary)", () => {
  test("synced and healthy: True with the generation", () => {
    const s = lvmNodeStatus(node(), { kind: "synced", pod: "lvm-system/a", applied: 0, status: AGENT }, T0);
    expect(condition(s, "Ready")).toEqual({
      type: "Ready",
      status: "True",
      reason: "Ready",
      message: "the node matches its spec; its volume groups and device classes are healthy",
      observedGeneration: 3,
      lastTransitionTime: "2044-10-22T16:29:24Z",
    });
  });

  test("a failed apply makes it False with the agent's error; the recovery makes it True again", () => {
    const ok = lvmNodeStatus(node(), { kind: "synced", pod: "lvm-system/a", applied: 0, status: AGENT }, T0);
    const failed = lvmNodeStatus(
      node(ok),
      { kind: "failed", message: "node n1: apply failed at step 2 (vgextend vg1 /dev/loop4): exit 5" },
      T1,
    );
    expect(condition(failed, "Ready")).toMatchObject({
      status: "False",
      reason: "AgentFailed",
      message: "Reconciled: node n1: apply failed at step 2 (vgextend vg1 /dev/loop4): exit 5",
      lastTransitionTime: "2044-10-22T16:30:24Z",
    });
    const back = lvmNodeStatus(
      node(failed),
      { kind: "synced", pod: "lvm-system/a", applied: 1, status: AGENT },
      T1 + 60_000,
    );
    expect(condition(back, "Ready")).toMatchObject({
      status: "True",
      lastTransitionTime: "2044-10-22T16:31:24Z",
    });
  });

  test("busy: Unknown; a new generation not yet reconciled keeps the old observedGeneration", () => {
    const ok = lvmNodeStatus(node(), { kind: "synced", pod: "lvm-system/a", applied: 0, status: AGENT }, T0);
    const busy = lvmNodeStatus(node(ok, 4), { kind: "busy", message: "409 OperationInProgress" }, T1);
    expect(condition(busy, "Ready")).toMatchObject({
      status: "Unknown",
      reason: "AgentBusy",
      observedGeneration: 4,
    });
    expect(condition(ok, "Ready")?.observedGeneration).toBe(3);
  });

  test("an agent that reports Degraded with every condition True: False, reason Degraded", () => {
    const s = lvmNodeStatus(
      node(),
      { kind: "synced", pod: "lvm-system/a", applied: 0, status: { ...AGENT, state: "Degraded" } },
      T0,
    );
    expect(condition(s, "Ready")).toMatchObject({ status: "False", reason: "Degraded" });
  });
});
