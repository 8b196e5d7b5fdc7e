import { lvmNodeStatusSchema } from "../api";
import type { NodeInventory } from "../inventory/types";
import type { NodePlan } from "../planner/types";
import type { OperationSummary } from "./journal";
import { buildStatus } from "./status";
import { specFor } from "../../test/support/agent/fake-node";

const now = new Date("2026-11-22T10:00:00.000Z");
const spec = {
  ...specFor({ vg0: ["/dev/sdb"] }),
  deviceClasses: [
    {
      name: "fast",
      strategy: "Thin" as const,
      volumeGroup: "vg0",
      thin: { poolName: "pool0", sizePercent: 90, overprovisionRatio: 10 },
    },
  ],
};
const inventory = (withVg: boolean): NodeInventory => ({
  node: "n",
  labels: {},
  devices: [],
  pvs: withVg ? [{ device: "/dev/sdb", uuid: "U1", vgName: "vg0", size: 1 << 30, free: 0, tags: [] }] : [],
  vgs: withVg
    ? [
        {
          name: "vg0",
          uuid: "V",
          size: 1 << 30,
          free: 1 << 20,
          extentSize: 4 << 20,
          extentCount: 256,
          freeExtentCount: 0,
          tags: ["pulumi-lvm"],
        },
      ]
    : [],
  lvs: withVg
    ? [
        {
          vgName: "vg0",
          name: "pool0",
          uuid: "P",
          size: 900 << 20,
          attr: "twi-aotz--",
          dataPercent: 12.5,
          metadataPercent: 3,
          tags: [],
        },
      ]
    : [],
});
const plan = (
  actions: NodePlan["actions"] = [],
  excluded: NodePlan["volumeGroups"][number]["excluded"] = [],
): NodePlan => ({
  node: "n",
  selected: true,
  volumeGroups: [{ name: "vg0", claimed: [], excluded }],
  actions,
  blocked: [],
  lvmd: { "device-classes": [] },
  hash: "h",
});
const op = (
  finish?: OperationSummary["finish"],
  actions: OperationSummary["actions"] = [],
): OperationSummary => ({
  start: {
    type: "operation-start",
    op: "op-1",
    kind: "apply",
    at: "2026-11-22T09:00:00.000Z",
    approvedHash: "h",
    planHash: "h",
    specDigest: "d",
    spec,
    devices: [],
    actionCount: 3,
  },
  ...(finish ? { finish } : {}),
  actions,
});

describe("buildStatus", () => {
  it("reports a converged node: Healthy groups with size, free, members, exclusions and our thin pool", () => {
    const { status, lastOperation } = buildStatus({
      spec,
      inventory: inventory(true),
      plan: plan([], [{ kname: "/dev/sdc", reasons: ["/dev/sdc is mounted at /boot"] }]),
      last: op({ type: "operation-finish", op: "op-1", at: "2026-11-22T09:00:01.000Z", result: "succeeded" }),
      running: false,
      now,
    });
    expect(lvmNodeStatusSchema.parse(status)).toEqual(status);
    expect(status.state).toBe("Ready");
    expect(status.volumeGroups![0]).toEqual({
      name: "vg0",
      state: "Healthy",
      size: "1Gi",
      free: "1Mi",
      devices: {
        included: [{ kname: "/dev/sdb", id: "pv:U1", size: "1Gi" }],
        excluded: [{ kname: "/dev/sdc", reasons: ["/dev/sdc is mounted at /boot"] }],
      },
      volumes: [
        {
          name: "pool0",
          attributes: "twi-aotz--",
          size: "900Mi",
          dataPercent: "12.50",
          metadataPercent: "3.00",
        },
      ],
    });
    expect(status.deviceClasses).toEqual([{ name: "fast", volumeGroup: "vg0", state: "Healthy" }]);
    expect(status.conditions!.map((c) => [c.type, c.status, c.lastTransitionTime])).toEqual([
      ["VolumeGroupsHealthy", "True", "2026-11-22T09:00:01.000Z"],
      ["DeviceClassesHealthy", "True", "2026-11-22T09:00:01.000Z"],
    ]);
    expect(lastOperation).toMatchObject({ result: "succeeded", stepCount: 3 });
  });

  it("says why the last apply failed: the step, the command, its exit code and stderr", () => {
    const error = {
      message: "vgcreate vg0 /dev/sdb exited 5: boom",
      argv: ["vgcreate", "vg0", "/dev/sdb"],
      exitCode: 5,
      stderr: "boom",
    };
    const { status, lastOperation } = buildStatus({
      spec,
      inventory: inventory(false),
      plan: plan([
        { op: "vgcreate", argv: ["vgcreate", "vg0", "/dev/sdb"], volumeGroup: "vg0", reason: "r" },
      ]),
      last: op(
        { type: "operation-finish", op: "op-1", at: "2026-11-22T09:00:01.000Z", result: "failed", error },
        [{ type: "action-error", op: "op-1", index: 1, at: "x", action: "vgcreate", error }],
      ),
      running: false,
      now,
    });
    expect(status.state).toBe("Failed");
    expect(status.volumeGroups![0]).toMatchObject({
      state: "Failed",
      message: "last apply failed: vgcreate vg0 /dev/sdb exited 5: boom",
    });
    expect(status.deviceClasses![0]).toMatchObject({ state: "Failed" });
    expect(status.conditions![0]).toMatchObject({ status: "False", reason: "OperationFailed" });
    expect(lastOperation?.error).toEqual({ ...error, step: 1, action: "vgcreate" });
  });

  it("calls an unfinished operation interrupted, or running while it runs", () => {
    const input = { spec, inventory: inventory(false), plan: plan(), last: op(), now };
    expect(buildStatus({ ...input, running: false }).lastOperation).toMatchObject({
      result: "interrupted",
      error: { message: expect.stringMatching(/send the same request again to resume/) },
    });
    const running = buildStatus({ ...input, running: true });
    expect(running.lastOperation?.result).toBe("running");
    expect(running.status.state).toBe("Progressing");
  });

  it("is Pending before any spec was applied", () => {
    const { status } = buildStatus({
      spec: undefined,
      inventory: inventory(false),
      plan: undefined,
      last: undefined,
      running: false,
      now,
    });
    expect(lvmNodeStatusSchema.parse(status).state).toBe("Pending");
  });
});

describe("buildStatus: lvm's devices file", () => {
  const succeeded = op({
    type: "operation-finish",
    op: "op-1",
    at: "2026-11-22T09:00:01.000Z",
    result: "succeeded",
  });
  const withFile = (
    entries: { devname: string; pvid?: string }[],
    o: { exists?: boolean } = {},
  ): NodeInventory => ({
    ...inventory(true),
    devicesFile: { enabled: true, name: "system.devices", exists: o.exists ?? true, entries },
  });
  const stateOf = (inv: NodeInventory) => {
    const { status } = buildStatus({
      spec,
      inventory: inv,
      plan: plan(),
      last: succeeded,
      running: false,
      now,
    });
    return { state: status.volumeGroups![0]!.state, message: status.volumeGroups![0]!.message };
  };

  it("a member PV the file does not list makes the group Degraded, naming the PV and the file", () => {
    expect(stateOf(withFile([]))).toEqual({
      state: "Degraded",
      message:
        "physical volume /dev/sdb of vg0 is not in lvm's devices file system.devices: the host's lvm, its boot-time activation and lvmd do not see it",
    });
  });

  it("listed by its PVID (the PV UUID without dashes), or a file not in use: Healthy", () => {
    expect(stateOf(withFile([{ devname: "/dev/sdb", pvid: "U1" }])).state).toBe("Healthy");
    expect(stateOf(withFile([], { exists: false })).state).toBe("Healthy");
    expect(stateOf(inventory(true)).state).toBe("Healthy");
  });
});
