import type { NodePlanResponse } from "../../agent-client/agent-client";
import type { LVMNodeSpec } from "../../api";
import { waitingPlan } from "./pending";

const spec = { volumeGroups: [], approvalPolicy: "Destructive" } as unknown as LVMNodeSpec;

/** A plan that adds /dev/sdc back to vg1, which exists; `adopted`: the agent created its PV itself. */
function rejoin(adopted: boolean): NodePlanResponse {
  return {
    node: "n1",
    hash: "h1",
    selected: true,
    blocked: [],
    lvmd: { "device-classes": [] },
    volumeGroups: [
      {
        name: "vg1",
        exists: true,
        excluded: [],
        claimed: [
          { kname: "/dev/sdb", path: "/dev/sdb", id: "wwn:b", member: true },
          {
            kname: "/dev/sdc",
            path: "/dev/sdc",
            id: "wwn:c",
            member: false,
            ...(adopted ? { adopted } : {}),
          },
        ],
      },
    ],
    actions: [
      {
        op: "vgextend",
        argv: ["vgextend", "vg1", "/dev/sdc"],
        volumeGroup: "vg1",
        device: "/dev/sdc",
        deviceId: "wwn:c",
        reason: "",
      },
    ],
  } as unknown as NodePlanResponse;
}

describe("waitingPlan: a device joining a group that exists", () => {
  test("a device nobody reviewed waits under Destructive", () => {
    expect(waitingPlan(rejoin(false), spec, new Set(["/dev/sdb", "wwn:b"]))).toMatchObject({
      hash: "h1",
      held: 1,
    });
  });

  test("one the group held before (the LVMNode's status) does not", () => {
    expect(waitingPlan(rejoin(false), spec, new Set(["wwn:c"]))).toBeUndefined();
  });

  test("nor an orphan PV the agent created itself (adopted), even when the status no longer lists it", () => {
    expect(waitingPlan(rejoin(true), spec, new Set(["/dev/sdb", "wwn:b"]))).toBeUndefined();
  });
});
