import type { LVMNodeObject, LVMNodeSetObject } from "../types";
import { rolloutOf } from "./rollout-input";

const template = { volumeGroups: [] } as never;
const set = (o: {
  generation: number;
  status?: LVMNodeSetObject["status"];
  annotations?: Record<string, string>;
}) =>
  ({
    apiVersion: "lvm.topolvm.io/v2alpha1",
    kind: "LVMNodeSet",
    metadata: {
      name: "s",
      namespace: "ns",
      generation: o.generation,
      ...(o.annotations ? { annotations: o.annotations } : {}),
    },
    spec: { template, rollout: { maxConcurrent: 1 } },
    ...(o.status ? { status: o.status } : {}),
  }) as LVMNodeSetObject;
const failed = (name: string): LVMNodeObject => ({
  apiVersion: "lvm.topolvm.io/v2alpha1",
  kind: "LVMNode",
  metadata: { name, namespace: "ns", generation: 3 },
  spec: template,
  status: {
    conditions: [
      {
        type: "Reconciled",
        status: "False",
        reason: "AgentFailed",
        message: "pvcreate exited 5",
        observedGeneration: 3,
        lastTransitionTime: "2026-01-01T00:00:00Z",
      },
    ],
  },
});
const own = new Map([["n1", failed("n1")]]);
const pausedCondition = (observedGeneration: number) => ({
  type: "RolloutPaused",
  status: "True" as const,
  reason: "NodeFailed",
  message: "…",
  observedGeneration,
  lastTransitionTime: "2026-01-01T00:00:00Z",
});

describe("rolloutOf: when a paused rollout resumes", () => {
  test("a failure right after a spec change, before any status caught up, pauses", () => {
    const r = rolloutOf(set({ generation: 2, status: { observedGeneration: 1 } }), own, 2);
    expect(r.decision.pausedBy.map((p) => p.node)).toEqual(["n1"]);
    expect(r.resumed).toEqual([]);
  });

  test("a change of the set after the pause was recorded resumes it once", () => {
    const r = rolloutOf(set({ generation: 3, status: { conditions: [pausedCondition(2)] } }), own, 2);
    expect(r.resumed).toEqual(["n1"]);
    expect(r.decision.pausedBy).toEqual([]);
    expect(r.status.skipped).toEqual(["n1"]);
  });

  test("a new value of the resume annotation resumes it once; the same value again does not", () => {
    const status = { conditions: [pausedCondition(2)], rollout: { resumed: "a" } };
    expect(
      rolloutOf(set({ generation: 2, status, annotations: { "lvm.topolvm.io/rollout-resume": "b" } }), own, 2)
        .resumed,
    ).toEqual(["n1"]);
    expect(
      rolloutOf(set({ generation: 2, status, annotations: { "lvm.topolvm.io/rollout-resume": "a" } }), own, 2)
        .resumed,
    ).toEqual([]);
  });
});
