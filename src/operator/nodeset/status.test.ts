import { nodeSetStatus } from "./status";
import type { LVMNodeObject, LVMNodeSetObject } from "../types";

const T0 = Date.parse("2044-10-22T16:29:24Z");
const set: LVMNodeSetObject = {
  apiVersion: "lvm.topolvm.io/v2alpha1",
  kind: "LVMNodeSet",
  metadata: { name: "fast", namespace: "storage", uid: "u", generation: 3 },
  spec: { template: { volumeGroups: [] } },
};
const withState = (name: string, state?: "Ready" | "Progressing" | "Degraded" | "Failed"): LVMNodeObject => ({
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
      // the kstatus summary follows LVMNodesReady while nobody reports ProviderReady
      expect.objectContaining({
        type: "Ready",
        status,
        reason: status === "True" ? "Ready" : reason,
        observedGeneration: 3,
        lastTransitionTime: "2044-10-22T16:29:24Z",
      }),
    ]);
  });

  test.each([
    ["no node", active([]), [0, 0, 0, 0]],
    ["all Ready", active([withState("a", "Ready"), withState("b", "Ready")]), [2, 2, 0, 0]],
    ["one not reported yet", active([withState("a", "Ready"), withState("b")]), [2, 1, 0, 0]],
    [
      "an overlap and a failed write are Failed",
      active([withState("a", "Ready"), withState("b"), withState("c", "Ready")], {
        conflicts: ["b"],
        failures: ["c"],
      }),
      [3, 1, 0, 2],
    ],
    [
      "a Degraded and a Failed LVMNode",
      active([withState("a", "Degraded"), withState("b", "Failed")]),
      [2, 0, 1, 1],
    ],
    ["being deleted", { kind: "terminating" as const, remaining: ["a"] }, [0, 0, 0, 0]],
  ])(
    "counts, %s: desired, ready, degraded, failed = %j",
    (_what, input, [desired, ready, degraded, failed]) => {
      const s = nodeSetStatus(set, input, T0);
      expect([s.desiredNodes, s.readyNodes, s.degradedNodes, s.failedNodes]).toEqual([
        desired,
        ready,
        degraded,
        failed,
      ]);
    },
  );

  test("an invalid spec keeps the last counts (nothing was changed)", () => {
    const before = nodeSetStatus(set, active([withState("a", "Ready"), withState("b")]), T0);
    const s = nodeSetStatus({ ...set, status: before }, { kind: "invalid", problems: ["spec.x: bad"] }, T0);
    expect([s.desiredNodes, s.readyNodes, s.failedNodes]).toEqual([2, 1, 0]);
  });

  test("a node whose plan waits for an approval: AwaitingApproval, naming the node and the plan's hash", () => {
    const hash = "738ce1b7".repeat(8);
    const waiting: LVMNodeObject = {
      ...withState("b", "Progressing"),
      status: {
        state: "Progressing",
        pendingApproval: { hash, policy: "Destructive", since: "2044-10-22T16:29:24Z", steps: [] },
      },
    };
    const status = nodeSetStatus(set, active([withState("a", "Ready"), waiting, withState("c")]), T0);
    expect(status.conditions?.find((c) => c.type === "LVMNodesReady")).toMatchObject({
      status: "False",
      reason: "AwaitingApproval",
      message: `1 of 3 LVMNodes are Ready; 1 wait for a person to approve their plan: b (plan ${hash}) (pulumi-lvm approve --node NODE --hash HASH, or a NodeSet's approvals); not yet: b (Progressing), c (Pending)`,
    });
    expect(status.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "AwaitingApproval",
    });
    // A failure elsewhere comes first: it needs someone too, and says why.
    expect(
      nodeSetStatus(set, active([waiting, withState("c")], { failures: ["c"] }), T0).conditions?.find(
        (c) => c.type === "LVMNodesReady",
      ),
    ).toMatchObject({ reason: "ApplyFailed" });
  });

  test("Ready follows the nodes as one fails and recovers; its transition time moves only on a change", () => {
    const ok = nodeSetStatus(set, active([withState("a", "Ready"), withState("b", "Ready")]), T0);
    expect(ok.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "True",
      message: "2 of 2 LVMNodes are Ready",
    });
    const failing = nodeSetStatus(
      { ...set, status: ok },
      active([withState("a", "Ready"), withState("b", "Degraded")]),
      T0 + 1000,
    );
    expect(failing.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "LVMNodesNotReady",
      message: expect.stringMatching(/^LVMNodesReady: 1 of 2 LVMNodes are Ready; not yet: b \(Degraded\)/),
      lastTransitionTime: "2044-10-22T16:29:25Z",
    });
    expect([failing.readyNodes, failing.degradedNodes]).toEqual([1, 1]);
    const back = nodeSetStatus(
      { ...set, status: failing },
      active([withState("a", "Ready"), withState("b", "Ready")]),
      T0 + 5000,
    );
    expect(back.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "True",
      lastTransitionTime: "2044-10-22T16:29:29Z",
    });
  });

  test("a ProviderReady False reported by someone else makes Ready False", () => {
    const provider = {
      type: "ProviderReady",
      status: "False" as const,
      reason: "CSIDriverMissing",
      message: "no CSIDriver topolvm.io",
      lastTransitionTime: "2044-01-01T00:00:00Z",
    };
    const s = nodeSetStatus(
      { ...set, status: { conditions: [provider] } },
      active([withState("a", "Ready")]),
      T0,
    );
    expect(s.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "CSIDriverMissing",
      message: "ProviderReady: no CSIDriver topolvm.io",
    });
  });

  test("entries name each selected node that is not Ready, with its state and why; Ready ones are counted", () => {
    const s = nodeSetStatus(set, active([withState("a", "Ready"), withState("b")], { conflicts: ["c"] }), T0);
    expect(s.nodes).toEqual([
      { name: "b", state: "Pending", message: "waiting for the node agent to report" },
    ]);
    expect(s.conditions?.[0]?.message).toBe("c overlaps");
  });

  test("an entry says why once: the LVMNode's Ready condition repeats its failing condition and is left out", () => {
    const failing: LVMNodeObject = {
      ...withState("b", "Degraded"),
      status: {
        state: "Degraded",
        conditions: [
          {
            type: "Reconciled",
            status: "False",
            reason: "ApplyFailed",
            message: "vgcreate vg1: exit 5",
            lastTransitionTime: "2044-10-22T16:29:24Z",
          },
          {
            type: "Ready",
            status: "False",
            reason: "ApplyFailed",
            message: "Reconciled: vgcreate vg1: exit 5",
            lastTransitionTime: "2044-10-22T16:29:24Z",
          },
        ],
      },
    };
    const s = nodeSetStatus(set, active([failing]), T0);
    expect(s.nodes).toEqual([{ name: "b", state: "Degraded", message: "Reconciled: vgcreate vg1: exit 5" }]);
    // Ready alone False (its own reason, say a state): it is the only why, so it stays.
    const onlyReady: LVMNodeObject = {
      ...withState("c", "Progressing"),
      status: {
        state: "Progressing",
        conditions: [
          {
            type: "Ready",
            status: "False",
            reason: "Progressing",
            message: "state is Progressing",
            lastTransitionTime: "2044-10-22T16:29:24Z",
          },
        ],
      },
    };
    expect(nodeSetStatus(set, active([onlyReady]), T0).nodes).toEqual([
      { name: "c", state: "Progressing", message: "Ready: state is Progressing" },
    ]);
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
