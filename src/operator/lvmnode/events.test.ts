import type { LVMNodeStatus } from "../../api";
import { statusEvents } from "./events";

const at = "2044-10-22T16:29:24Z";
const status = (
  reconciled: [string, string, string],
  included: string[],
  excluded: string[] = [],
): LVMNodeStatus => ({
  state: "Ready",
  volumeGroups: [
    {
      name: "vg1",
      state: "Healthy",
      devices: {
        included: included.map((kname, i) => ({ kname, id: `pv:${i}` })),
        excluded: excluded.map((kname) => ({ kname, reasons: ["has an xfs signature"] })),
      },
    },
  ],
  conditions: [
    {
      type: "Reconciled",
      status: reconciled[0] as "True",
      reason: reconciled[1],
      message: reconciled[2],
      lastTransitionTime: at,
    },
  ],
});
const inSync = (inc: string[], exc: string[] = []) => status(["True", "InSync", "ok"], inc, exc);

test("the same status twice: no event (a resync that changes nothing records nothing)", () => {
  const s = inSync(["/dev/vdb"], ["/dev/vdz"]);
  expect(statusEvents(s, structuredClone(s))).toEqual([]);
});

test("devices newly claimed and newly excluded, per volume group", () => {
  expect(statusEvents(inSync(["/dev/vdb"]), inSync(["/dev/vdb", "/dev/vdc"], ["/dev/vdz"]))).toEqual([
    {
      type: "Normal",
      reason: "DevicesClaimed",
      action: "Claim",
      note: "volume group vg1: /dev/vdc (pv:1) now in it",
    },
    {
      type: "Normal",
      reason: "DevicesExcluded",
      action: "Claim",
      note: "volume group vg1: left alone: /dev/vdz (has an xfs signature)",
    },
  ]);
  // the first report: what is in the group now was claimed
  expect(statusEvents(undefined, inSync(["/dev/vdb"])).map((e) => e.reason)).toEqual(["DevicesClaimed"]);
});

test.each([
  ["PlanBlocked", "Warning"],
  ["NodeSetOverlap", "Warning"],
  ["TeardownRefused", "Warning"],
  ["AgentUnavailable", "Warning"],
])("Reconciled turning to %s: a %s event with its message, once", (reason) => {
  const before = inSync(["/dev/vdb"]);
  const after = status(["False", reason, `why ${reason}`], ["/dev/vdb"]);
  expect(statusEvents(before, after)).toEqual([
    { type: "Warning", reason, action: "Reconcile", note: `why ${reason}` },
  ]);
  expect(statusEvents(after, structuredClone(after))).toEqual([]);
  // another message of the same reason (another blocked device) is news
  expect(statusEvents(after, status(["False", reason, "other"], ["/dev/vdb"]))).toHaveLength(1);
});

test("AgentBusy and the True reasons are not worth an event; AgentFailed of an apply has its own", () => {
  const before = inSync(["/dev/vdb"]);
  expect(statusEvents(before, status(["Unknown", "AgentBusy", "busy"], ["/dev/vdb"]))).toEqual([]);
  expect(statusEvents(before, status(["True", "Applied", "applied 2"], ["/dev/vdb"]))).toEqual([]);
  const failed = status(["False", "AgentFailed", "exit 5"], ["/dev/vdb"]);
  expect(statusEvents(before, failed, true)).toEqual([]);
  expect(statusEvents(before, failed, false).map((e) => e.reason)).toEqual(["AgentFailed"]);
});
