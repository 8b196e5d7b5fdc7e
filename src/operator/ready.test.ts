import type { Condition } from "../api";
import { readyCondition } from "./ready";

const at = "2044-10-22T16:29:24Z";
const c = (type: string, status: Condition["status"], reason?: string, message?: string): Condition => ({
  type,
  status,
  lastTransitionTime: at,
  ...(reason ? { reason } : {}),
  ...(message ? { message } : {}),
});
const ORDER = ["Reconciled", "VolumeGroupsHealthy", "DeviceClassesHealthy", "ProviderReady"];
const ready = (conditions: Condition[], state?: string) =>
  readyCondition({
    conditions,
    order: ORDER,
    generation: 7,
    okMessage: "all good",
    ...(state ? { state } : {}),
  });

describe("readyCondition", () => {
  test.each([
    [
      "all True, state Ready",
      [c("Reconciled", "True", "InSync"), c("VolumeGroupsHealthy", "True")],
      "Ready",
      "True",
      "Ready",
      "all good",
    ],
    ["no conditions, no state", [], undefined, "True", "Ready", "all good"],
    [
      "Reconciled False",
      [
        c("Reconciled", "False", "AgentFailed", "node n1: vgcreate exited 5"),
        c("VolumeGroupsHealthy", "True"),
      ],
      "Degraded",
      "False",
      "AgentFailed",
      "Reconciled: node n1: vgcreate exited 5",
    ],
    [
      "False beats an earlier Unknown",
      [
        c("Reconciled", "Unknown", "AgentBusy", "busy"),
        c("VolumeGroupsHealthy", "False", "Missing", "vg1 missing"),
      ],
      "Progressing",
      "False",
      "Missing",
      "VolumeGroupsHealthy: vg1 missing",
    ],
    [
      "Unknown when nothing is False",
      [c("Reconciled", "Unknown", "AgentBusy", "busy"), c("VolumeGroupsHealthy", "True")],
      "Ready",
      "Unknown",
      "AgentBusy",
      "Reconciled: busy",
    ],
    [
      "order decides between two False",
      [c("VolumeGroupsHealthy", "False", "Missing"), c("Reconciled", "False", "PlanBlocked", "blocked")],
      "Degraded",
      "False",
      "PlanBlocked",
      "Reconciled: blocked",
    ],
    [
      "a False condition with no reason",
      [c("DeviceClassesHealthy", "False")],
      "Ready",
      "False",
      "DeviceClassesHealthyFalse",
      "DeviceClassesHealthy: False",
    ],
    [
      "all True but state Pending",
      [c("Reconciled", "True", "InSync")],
      "Pending",
      "False",
      "Pending",
      "state is Pending",
    ],
    [
      "ProviderReady False counts when present",
      [c("Reconciled", "True"), c("ProviderReady", "False", "NoCSINode", "no CSINode")],
      "Ready",
      "False",
      "NoCSINode",
      "ProviderReady: no CSINode",
    ],
    [
      "types not in the order and an old Ready are ignored",
      [c("Other", "False"), c("Ready", "False", "Old")],
      "Ready",
      "True",
      "Ready",
      "all good",
    ],
  ])("%s", (_what, conditions, state, status, reason, message) => {
    expect(ready(conditions, state)).toEqual({
      type: "Ready",
      status,
      reason,
      message,
      observedGeneration: 7,
    });
  });
});
