import { nodeSetStatus } from "./status";
import type { LVMNodeObject, LVMNodeSetObject } from "../types";

const T0 = Date.parse("2044-10-22T16:29:24Z");
const set: LVMNodeSetObject = {
  apiVersion: "lvm.topolvm.io/v2alpha1",
  kind: "LVMNodeSet",
  metadata: { name: "fast", namespace: "storage", uid: "u", generation: 3 },
  spec: { template: { volumeGroups: [] } },
};
const withState = (name: string, state?: "Ready" | "Progressing"): LVMNodeObject => ({
  apiVersion: "lvm.topolvm.io/v2alpha1",
  kind: "LVMNode",
  metadata: { name, namespace: "storage" },
  spec: { volumeGroups: [] },
  ...(state ? { status: { state } } : {}),
});
const active = (lvmNodes: LVMNodeObject[], extra: { conflicts?: string[]; failures?: string[] } = {}) => ({
  kind: "active" as const,
  selected: lvmNodes.map((n) => n.metadata.name),
  conflicts: (extra.conflicts ?? []).map((node) => ({ node, message: `${node} overlaps` })),
  failures: (extra.failures ?? []).map((node) => ({ node, message: `${node} failed` })),
  lvmNodes: new Map(lvmNodes.map((n) => [n.metadata.name, n])),
});

describe("nodeSetStatus", () => {
  test.each([
    ["no node", active([]), "Pending", "False", "NoNodesSelected"],
    [
      "all Ready",
      active([withState("a", "Ready"), withState("b", "Ready")]),
      "Ready",
      "True",
      "AllLVMNodesReady",
    ],
    [
      "some Ready",
      active([withState("a", "Ready"), withState("b", "Progressing")]),
      "Progressing",
      "False",
      "LVMNodesNotReady",
    ],
    ["none reported", active([withState("a"), withState("b")]), "Pending", "False", "LVMNodesNotReady"],
    [
      "an overlap",
      active([withState("a", "Ready"), withState("b")], { conflicts: ["b"] }),
      "Degraded",
      "False",
      "NodeSetOverlap",
    ],
    [
      "a failed write",
      active([withState("a", "Ready"), withState("b")], { failures: ["b"] }),
      "Degraded",
      "False",
      "ApplyFailed",
    ],
    [
      "an invalid spec",
      { kind: "invalid" as const, problems: ["spec.x: bad"] },
      "Failed",
      "False",
      "InvalidSpec",
    ],
    [
      "being deleted",
      { kind: "terminating" as const, remaining: ["a"] },
      "Terminating",
      "False",
      "Terminating",
    ],
  ])("%s: state %s, LVMNodesReady %s (%s)", (_what, input, state, status, reason) => {
    const s = nodeSetStatus(set, input, T0);
    expect(s.state).toBe(state);
    expect(s.observedGeneration).toBe(3);
    expect(s.conditions).toEqual([
      expect.objectContaining({
        type: "LVMNodesReady",
        status,
        reason,
        observedGeneration: 3,
        lastTransitionTime: "2044-10-22T16:29:24Z",
      }),
    ]);
  });

  test("entries name each selected node that is not Ready, with its state and why; Ready ones are counted", () => {
    const s = nodeSetStatus(set, active([withState("a", "Ready"), withState("b")], { conflicts: ["c"] }), T0);
    expect(s.nodes).toEqual([
      { name: "b", state: "Pending", message: "waiting for the node agent to report" },
    ]);
    expect(s.conditions?.[0]?.message).toBe("c overlaps");
  });

  test("at 1,000 nodes: at most 100 listed, the condition counts them all; all Ready: none listed", () => {
    const many = Array.from({ length: 1000 }, (_, i) => withState(`n${String(i).padStart(4, "0")}`));
    const s = nodeSetStatus(set, active(many), T0);
    expect(s.nodes).toHaveLength(100);
    expect(s.nodes?.[99]?.name).toBe("n0099");
    expect(s.conditions?.[0]?.message).toMatch(
      /^0 of 1000 LVMNodes are Ready; not yet: .* and 990 more \(status\.nodes lists the first 100\)$/,
    );
    const ready = nodeSetStatus(set, active(many.map((n) => withState(n.metadata.name, "Ready"))), T0);
    expect(ready.nodes).toEqual([]);
    expect(JSON.stringify(ready).length).toBeLessThan(1000);
  });

  test("recomputing an unchanged situation gives the same status (no write), even later", () => {
    const first = nodeSetStatus(set, active([withState("a")]), T0);
    expect(nodeSetStatus({ ...set, status: first }, active([withState("a")]), T0 + 3_600_000)).toEqual(first);
  });

  test("a ProviderReady condition set by someone else is kept", () => {
    const provider = {
      type: "ProviderReady",
      status: "True" as const,
      lastTransitionTime: "2044-01-01T00:00:00Z",
    };
    const s = nodeSetStatus({ ...set, status: { conditions: [provider] } }, active([]), T0);
    expect(s.conditions?.[0]).toEqual(provider);
  });
});
