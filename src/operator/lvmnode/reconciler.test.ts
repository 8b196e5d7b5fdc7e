import type { LVMNodeSpec, LVMNodeStatus } from "../../api";
import type { NodeAgentDriver } from "../agents/driver";
import type { SyncOutcome, TeardownOutcome } from "../agents/outcome";
import { KubeApiError } from "../../kube/errors";
import { LVM_NODES } from "../../kube/resources";
import {
  AgentNotSyncedError,
  LVMNodeReconciler,
  LVMNODE_FINALIZER,
  ReconcileStoppedError,
} from "./reconciler";
import { RECONCILED } from "./status";
import { FakeKube } from "../../../test/support/kube/fake-kube";
import { ManualClock } from "../../../test/support/kube/manual-clock";
import { controllerReference } from "../ownership";
import type { LVMNodeObject, LVMNodeSetObject } from "../types";

const KEY = "storage/n1";
const SPEC = {
  volumeGroups: [
    {
      name: "vg1",
      deviceSelector: { deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "Any" }] }] },
    },
  ],
  deviceClasses: [{ name: "thick", strategy: "Thick", volumeGroup: "vg1" }],
};
/** Accepted by the CRD, refused by our rules: two Thick classes on one volume group. */
const INVALID_SPEC = {
  ...SPEC,
  deviceClasses: [...SPEC.deviceClasses, { name: "thick2", strategy: "Thick", volumeGroup: "vg1" }],
};
const AGENT_STATUS: LVMNodeStatus = { state: "Ready", volumeGroups: [], conditions: [] };
const POD = "lvm-system/agent-a";
const FAST = {
  metadata: {
    name: "fast",
    namespace: "storage",
    uid: "uid-fast",
    creationTimestamp: "2044-10-22T10:00:00Z",
  },
  spec: {},
} as unknown as LVMNodeSetObject;

/** A fake driver answering with `sync`/`teardown` and recording each call with the API requests made before it. */
function fakeDriver(
  kube: FakeKube,
  sync: SyncOutcome,
  teardown: TeardownOutcome = { kind: "tornDown", pod: POD },
) {
  const calls: Array<{ call: "sync" | "teardown"; node: string; spec: LVMNodeSpec; before: string[] }> = [];
  const signals: Array<AbortSignal | undefined> = [];
  const record = (
    call: "sync" | "teardown",
    to: string | { node: string },
    spec: LVMNodeSpec,
    stop?: AbortSignal,
  ) => {
    const node = typeof to === "string" ? to : to.node;
    calls.push({ call, node, spec, before: kube.calls.map((c) => `${c.verb} ${c.object}`) });
    signals.push(stop);
  };
  const driver: NodeAgentDriver = {
    sync: async (node, spec, stop) => (record("sync", node, spec, stop), sync),
    teardown: async (node, spec, stop) => (record("teardown", node, spec, stop), teardown),
  };
  return { driver, calls, signals };
}

function setup(opts: {
  node?: Partial<LVMNodeObject["metadata"]> & { spec?: unknown; status?: LVMNodeStatus };
  sync?: SyncOutcome;
  teardown?: TeardownOutcome;
  nodeExists?: boolean;
  absent?: boolean;
  /**
   * The LVMNodeSets the operator reconciles; one without a template gets the LVMNode's spec as its
   * template (the LVMNode is what its set says). @default storage/fast, controlling the LVMNode
   */
  sets?: LVMNodeSetObject[];
  /** Other LVMNodes in the cache (overlap). */
  others?: LVMNodeObject[];
  /** Read the LVMNode from this cache (the operator's informer), not with a GET. */
  cache?: Map<string, LVMNodeObject>;
}) {
  const kube = new FakeKube();
  const { spec = SPEC, status, ...meta } = opts.node ?? {};
  if (!opts.absent)
    kube.put(LVM_NODES, {
      metadata: {
        name: "n1",
        namespace: "storage",
        generation: 2,
        ownerReferences: [controllerReference(FAST)],
        ...meta,
      },
      spec,
      ...(status ? { status } : {}),
    } as LVMNodeObject);
  const agents = fakeDriver(
    kube,
    opts.sync ?? { kind: "synced", pod: POD, applied: 0, status: AGENT_STATUS },
    opts.teardown,
  );
  const logs: Array<Record<string, unknown>> = [];
  const requeued: Array<[string, number]> = [];
  const cache = opts.cache;
  const reconciler = new LVMNodeReconciler({
    ...(cache ? { read: (key: string) => cache.get(key) } : {}),
    requeue: (key, ms) => requeued.push([key, ms]),
    kube,
    agents: agents.driver,
    node: (name) => (opts.nodeExists === false ? undefined : { metadata: { name, labels: {} } }),
    sets: () =>
      (opts.sets ?? [FAST]).map((s) =>
        s.spec.template ? s : ({ ...s, spec: { ...s.spec, template: spec } } as LVMNodeSetObject),
      ),
    lvmNodes: () => opts.others ?? [],
    clock: new ManualClock(),
    log: (e) => logs.push(e),
  });
  const stored = () => kube.peek<LVMNodeObject>(LVM_NODES, "storage", "n1");
  const reconciled = () => stored()?.status?.conditions?.find((c) => c.type === RECONCILED);
  return {
    kube,
    agents: agents.calls,
    signals: agents.signals,
    reconciler,
    stored,
    reconciled,
    logs,
    requeued,
  };
}

const DELETING = { deletionTimestamp: "2044-10-22T16:00:00Z", finalizers: [LVMNODE_FINALIZER] };

describe("LVMNodeReconciler: the order get → not found → finalizer → act → status", () => {
  test("not found: one GET, nothing else", async () => {
    const t = setup({ absent: true });
    await expect(t.reconciler.reconcile(KEY)).resolves.toBe("not_found");
    expect(t.kube.calls).toEqual([{ verb: "GET", object: "LVMNode storage/n1" }]);
    expect(t.agents).toEqual([]);
  });

  test("a new LVMNode: finalizer first, then the agent, then the status", async () => {
    const t = setup({});
    await expect(t.reconciler.reconcile(KEY)).resolves.toBe("changed");
    expect(t.kube.calls.map((c) => `${c.verb} ${c.object}`)).toEqual([
      "GET LVMNode storage/n1",
      "PATCH LVMNode storage/n1",
      "PATCH LVMNode storage/n1 (status)",
    ]);
    expect(t.kube.calls[1]!.patch).toEqual({
      metadata: { resourceVersion: "101", finalizers: [LVMNODE_FINALIZER] },
    });
    expect(t.agents).toEqual([
      {
        call: "sync",
        node: "n1",
        spec: SPEC,
        before: ["GET LVMNode storage/n1", "PATCH LVMNode storage/n1"],
      },
    ]);
    // The status patch is guarded by the resourceVersion the finalizer patch returned.
    expect(t.kube.calls[2]!.patch).toMatchObject({ metadata: { resourceVersion: "102" } });
    expect(t.stored()?.metadata.finalizers).toEqual([LVMNODE_FINALIZER]);
    expect(t.stored()?.status).toMatchObject({ state: "Ready", observedGeneration: 2 });
    expect(t.reconciled()).toMatchObject({ status: "True", reason: "InSync", observedGeneration: 2 });
  });

  test("nothing changed: no write at all, in_sync", async () => {
    const t = setup({});
    await t.reconciler.reconcile(KEY);
    const before = t.kube.writes.length;
    await expect(t.reconciler.reconcile(KEY)).resolves.toBe("in_sync");
    expect(t.kube.writes).toHaveLength(before);
    expect(t.agents).toHaveLength(2);
  });

  test("steps applied: changed and Applied, even when the status is the same", async () => {
    const t = setup({ sync: { kind: "synced", pod: POD, applied: 3, status: AGENT_STATUS } });
    await expect(t.reconciler.reconcile(KEY)).resolves.toBe("changed");
    expect(t.reconciled()).toMatchObject({
      reason: "Applied",
      message: expect.stringContaining("applied 3 step(s)"),
    });
    expect(t.logs).toContainEqual({ msg: "applied", lvmNode: KEY, pod: POD, steps: 3 });
    // checked again at once, so Applied turns InSync right after the apply, not a resync later
    expect(t.requeued).toEqual([[KEY, 0]]);
  });

  test("nothing applied: not queued again", async () => {
    const t = setup({});
    await t.reconciler.reconcile(KEY);
    await t.reconciler.reconcile(KEY);
    expect(t.requeued).toEqual([]);
  });

  test("an existing finalizer is kept and not written again", async () => {
    const t = setup({ node: { finalizers: ["other", LVMNODE_FINALIZER] } });
    await t.reconciler.reconcile(KEY);
    expect(t.kube.writes.map((w) => w.object)).toEqual(["LVMNode storage/n1 (status)"]);
    expect(t.stored()?.metadata.finalizers).toEqual(["other", LVMNODE_FINALIZER]);
  });
});

describe("LVMNodeReconciler: read from the cache (the operator's informer)", () => {
  const applied: SyncOutcome = { kind: "synced", pod: POD, applied: 2, status: AGENT_STATUS };
  test("a current copy: the status is written with its resourceVersion, no GET for it", async () => {
    const cache = new Map<string, LVMNodeObject>();
    const t = setup({ node: { finalizers: [LVMNODE_FINALIZER] }, sync: applied, cache });
    cache.set(KEY, t.stored()!);
    await expect(t.reconciler.reconcile(KEY)).resolves.toBe("changed");
    // before: a GET before the status write too, whether the copy was current or not
    expect(t.kube.calls.map((c) => `${c.verb} ${c.object}`)).toEqual(["PATCH LVMNode storage/n1 (status)"]);
    expect(t.kube.calls[0]!.patch).toMatchObject({
      metadata: { resourceVersion: cache.get(KEY)!.metadata.resourceVersion },
    });
    expect(t.reconciled()).toMatchObject({ status: "True", reason: "Applied" });
  });

  test("a copy behind the API server (our last write not seen yet): 409, then the status computed again from a GET and written", async () => {
    const cache = new Map<string, LVMNodeObject>();
    const t = setup({ node: { finalizers: [LVMNODE_FINALIZER] }, cache });
    cache.set(KEY, t.stored()!);
    // The operator's own last status write, which the watch has not delivered yet.
    const since = "2044-10-22T09:00:00Z";
    t.kube.put(LVM_NODES, {
      ...t.stored()!,
      status: {
        state: "Ready",
        conditions: [
          {
            type: "Reconciled",
            status: "True",
            reason: "Applied",
            message: "applied",
            lastTransitionTime: since,
          },
        ],
      },
    } as LVMNodeObject);
    await expect(t.reconciler.reconcile(KEY)).resolves.toBe("changed");
    expect(t.kube.calls.map((c) => `${c.verb} ${c.object}`)).toEqual([
      "PATCH LVMNode storage/n1 (status)",
      "GET LVMNode storage/n1",
      "PATCH LVMNode storage/n1 (status)",
    ]);
    // computed from the API server's copy: Reconciled stayed True, so its transition time is kept
    expect(t.reconciled()).toMatchObject({ status: "True", reason: "InSync", lastTransitionTime: since });
  });

  test("behind, and the API server's copy already says it: no second write", async () => {
    const cache = new Map<string, LVMNodeObject>();
    const t = setup({ node: { finalizers: [LVMNODE_FINALIZER] }, cache });
    cache.set(KEY, t.stored()!);
    // the same reconcile on the API server's copy: its status is what this one computes
    const other = setup({ node: { finalizers: [LVMNODE_FINALIZER] } });
    await other.reconciler.reconcile(KEY);
    t.kube.put(LVM_NODES, { ...t.stored()!, status: other.stored()!.status } as LVMNodeObject);
    await expect(t.reconciler.reconcile(KEY)).resolves.toBe("in_sync");
    expect(t.kube.writes).toHaveLength(1); // the refused one
  });
});

describe("LVMNodeReconciler: the agent not in sync → requeue", () => {
  test("busy (409 PlanChanged / OperationInProgress): AgentBusy replaces the last outcome, thrown for a retry; again: no second write", async () => {
    const t = setup({
      node: {
        finalizers: [LVMNODE_FINALIZER],
        status: {
          state: "Failed",
          conditions: [
            {
              type: "Reconciled",
              status: "False",
              reason: "AgentFailed",
              message: "node n1: CommandFailed: the disk is gone",
              lastTransitionTime: "2044-10-22T10:00:00Z",
            },
          ],
        },
      },
      sync: { kind: "busy", message: "node n1: OperationInProgress: an apply is running" },
    });
    const error = await t.reconciler.reconcile(KEY).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentNotSyncedError);
    expect((error as Error).message).toBe(
      "storage/n1: node n1: OperationInProgress: an apply is running; retrying",
    );
    expect(t.stored()?.status?.state).toBe("Progressing");
    expect(t.reconciled()).toMatchObject({
      status: "Unknown",
      reason: "AgentBusy",
      message:
        "the agent is busy with another operation; retrying: node n1: OperationInProgress: an apply is running",
    });
    await expect(t.reconciler.reconcile(KEY)).rejects.toThrow(AgentNotSyncedError);
    expect(t.kube.writes).toHaveLength(1);
  });

  test("a hand-made LVMNode (no controller): never sent to the agent, no finalizer, NotManaged", async () => {
    const t = setup({ node: { ownerReferences: [] } });
    await expect(t.reconciler.reconcile(KEY)).resolves.toBe("changed");
    expect(t.agents).toEqual([]);
    expect(t.stored()?.metadata.finalizers).toBeUndefined();
    expect(t.stored()?.status?.state).toBe("Failed");
    expect(t.reconciled()).toMatchObject({
      status: "False",
      reason: "NotManaged",
      message:
        "LVMNode storage/n1 is not controlled by an LVMNodeSet this operator reconciles (no controller); nothing is sent to node n1's agent, and deleting it tears nothing down",
    });
    await expect(t.reconciler.reconcile(KEY)).resolves.toBe("in_sync");
  });

  test("controlled by a set re-created under the same name (another uid): NotManaged", async () => {
    const t = setup({ sets: [{ ...FAST, metadata: { ...FAST.metadata, uid: "uid-new" } }] });
    await t.reconciler.reconcile(KEY);
    expect(t.agents).toEqual([]);
    expect(t.reconciled()?.reason).toBe("NotManaged");
  });

  test("a hand-made LVMNode being deleted with deletionPolicy Delete: finalizer removed, no teardown", async () => {
    const t = setup({
      node: { ...DELETING, ownerReferences: [], spec: { ...SPEC, deletionPolicy: "Delete" } },
    });
    await expect(t.reconciler.reconcile(KEY)).resolves.toBe("changed");
    expect(t.agents).toEqual([]);
    expect(t.logs).toContainEqual(
      expect.objectContaining({
        msg: "not torn down",
        message: expect.stringContaining("is not controlled by an LVMNodeSet this operator reconciles"),
      }),
    );
  });

  test("overlap: an older set's LVMNode for the same node keeps it; this one is not driven, not torn down", async () => {
    const older = {
      metadata: {
        name: "old",
        namespace: "other",
        uid: "uid-old",
        creationTimestamp: "2044-10-22T09:00:00Z",
      },
      spec: {},
    } as unknown as LVMNodeSetObject;
    const rival = {
      metadata: { name: "n1", namespace: "other", ownerReferences: [controllerReference(older)] },
      spec: SPEC,
    } as unknown as LVMNodeObject;
    const t = setup({ sets: [FAST, older], others: [rival] });
    await t.reconciler.reconcile(KEY);
    expect(t.agents).toEqual([]);
    expect(t.reconciled()).toMatchObject({
      reason: "NodeSetOverlap",
      message:
        "node n1 is also selected by LVMNodeSet other/old (LVMNode other/n1), which keeps it (its LVMNode was there first); nothing is sent to the node's agent for storage/n1 until the sets no longer overlap",
    });
    // The younger rival does not keep it from this one.
    const younger = { ...older, metadata: { ...older.metadata, creationTimestamp: "2044-10-22T11:00:00Z" } };
    const t2 = setup({ sets: [FAST, younger], others: [rival] });
    await t2.reconciler.reconcile(KEY);
    expect(t2.agents.map((a) => a.call)).toEqual(["sync"]);
    // Deleting the loser with deletionPolicy Delete tears nothing down.
    const t3 = setup({
      node: { ...DELETING, spec: { ...SPEC, deletionPolicy: "Delete" } },
      sets: [FAST, older],
      others: [rival],
    });
    await expect(t3.reconciler.reconcile(KEY)).resolves.toBe("changed");
    expect(t3.agents).toEqual([]);
  });

  test("the genuine reference of a set that does not select the node: NotSelected, never sent, no finalizer", async () => {
    const picky = {
      ...FAST,
      spec: {
        nodeSelector: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: "role", operator: "In", values: ["storage"] }] }],
        },
      },
    } as unknown as LVMNodeSetObject;
    const t = setup({ sets: [picky] });
    await expect(t.reconciler.reconcile(KEY)).resolves.toBe("changed");
    expect(t.agents).toEqual([]);
    expect(t.stored()?.metadata.finalizers).toBeUndefined();
    expect(t.reconciled()).toMatchObject({ status: "False", reason: "NotSelected" });
  });

  test("a spec that is not the set's template: never sent, no write (the set writes its template)", async () => {
    const t = setup({ sets: [{ ...FAST, spec: { template: INVALID_SPEC } } as unknown as LVMNodeSetObject] });
    await expect(t.reconciler.reconcile(KEY)).resolves.toBe("in_sync");
    expect(t.agents).toEqual([]);
    expect(t.kube.writes).toEqual([]);
    expect(t.logs).toContainEqual(expect.objectContaining({ msg: "not driven", reason: "SpecNotTemplate" }));
  });

  test("deleted with its spec edited to Delete while the set says Retain: the set's Retain holds", async () => {
    const t = setup({
      node: { ...DELETING, spec: { ...SPEC, deletionPolicy: "Delete" } },
      sets: [{ ...FAST, spec: { template: SPEC } } as unknown as LVMNodeSetObject],
    });
    await expect(t.reconciler.reconcile(KEY)).resolves.toBe("changed");
    expect(t.agents).toEqual([]);
    expect(t.logs).toContainEqual(expect.objectContaining({ msg: "finalized", deletionPolicy: "Retain" }));
  });

  test("unavailable: AgentUnavailable written (Pending: never reported), then thrown; again: no second write", async () => {
    const message = "node n1: no agent pod on it is Running and Ready: lvm-system/agent-a (phase Pending)";
    const t = setup({ node: { finalizers: [LVMNODE_FINALIZER] }, sync: { kind: "unavailable", message } });
    await expect(t.reconciler.reconcile(KEY)).rejects.toThrow(new AgentNotSyncedError(`${KEY}: ${message}`));
    expect(t.stored()?.status?.state).toBe("Pending");
    expect(t.reconciled()).toMatchObject({ status: "False", reason: "AgentUnavailable", message });
    await expect(t.reconciler.reconcile(KEY)).rejects.toThrow(AgentNotSyncedError);
    expect(t.kube.writes).toHaveLength(1);
  });

  test("unavailable after a report: Degraded, the last volume groups kept", async () => {
    const vgs = [{ name: "vg1", state: "Healthy" as const }];
    const t = setup({
      node: { finalizers: [LVMNODE_FINALIZER], status: { state: "Ready", volumeGroups: vgs } },
      sync: { kind: "unavailable", message: "node n1: cannot reach its agent" },
    });
    await expect(t.reconciler.reconcile(KEY)).rejects.toThrow(AgentNotSyncedError);
    expect(t.stored()?.status).toMatchObject({ state: "Degraded", volumeGroups: vgs });
  });

  test("failed: AgentFailed with the agent's status when it gave one, then thrown", async () => {
    const message =
      "POST /v1/apply to agent pod lvm-system/agent-a answered HTTP 500: node n1: CommandFailed: vgcreate";
    const t = setup({ sync: { kind: "failed", message, status: { ...AGENT_STATUS, state: "Degraded" } } });
    await expect(t.reconciler.reconcile(KEY)).rejects.toThrow(message);
    expect(t.stored()?.status?.state).toBe("Degraded");
    expect(t.reconciled()).toMatchObject({ reason: "AgentFailed", message });
  });

  test("blocked: PlanBlocked written, not retried with backoff (a person decides)", async () => {
    const t = setup({
      sync: {
        kind: "blocked",
        pod: POD,
        blocked: ["vg1: /dev/sdc: has an xfs signature"],
        status: AGENT_STATUS,
      },
    });
    await expect(t.reconciler.reconcile(KEY)).resolves.toBe("changed");
    expect(t.reconciled()).toMatchObject({ status: "False", reason: "PlanBlocked" });
  });

  test("409 from the API server on the finalizer: thrown, the agent is not called", async () => {
    const t = setup({});
    t.kube.failNext("PATCH", new KubeApiError("PATCH", "LVMNode storage/n1", 409, "Conflict", "modified"));
    await expect(t.reconciler.reconcile(KEY)).rejects.toThrow(
      "PATCH LVMNode storage/n1: HTTP 409 Conflict: modified",
    );
    expect(t.agents).toEqual([]);
  });

  test("409 from the API server on the status: thrown for a retry", async () => {
    const t = setup({ node: { finalizers: [LVMNODE_FINALIZER] } });
    t.kube.failNext(
      "PATCH",
      new KubeApiError("PATCH", "LVMNode storage/n1 (status)", 409, "Conflict", "modified"),
    );
    await expect(t.reconciler.reconcile(KEY)).rejects.toThrow("HTTP 409 Conflict");
    expect(t.stored()?.status).toBeUndefined();
  });
});

describe("LVMNodeReconciler: an invalid spec never reaches the agent", () => {
  test("InvalidSpec, state Failed, the problems named; the finalizer is still ensured", async () => {
    const t = setup({ node: { spec: INVALID_SPEC } });
    await expect(t.reconciler.reconcile(KEY)).resolves.toBe("changed");
    expect(t.agents).toEqual([]);
    expect(t.stored()?.metadata.finalizers).toEqual([LVMNODE_FINALIZER]);
    expect(t.stored()?.status?.state).toBe("Failed");
    expect(t.reconciled()).toMatchObject({
      status: "False",
      reason: "InvalidSpec",
      message: expect.stringMatching(
        /^the spec is invalid; nothing was sent to the agent: spec\.deviceClasses\[1\]\.volumeGroup: /,
      ),
    });
    await expect(t.reconciler.reconcile(KEY)).resolves.toBe("in_sync");
  });

  test("being deleted with Delete: no teardown, the finalizer stays", async () => {
    const t = setup({ node: { ...DELETING, spec: { ...INVALID_SPEC, deletionPolicy: "Delete" } } });
    await expect(t.reconciler.reconcile(KEY)).resolves.toBe("changed");
    expect(t.agents).toEqual([]);
    expect(t.stored()?.metadata.finalizers).toEqual([LVMNODE_FINALIZER]);
    expect(t.reconciled()).toMatchObject({ reason: "InvalidSpec" });
  });
});

describe("LVMNodeReconciler: deletion (deletionPolicy)", () => {
  test("Retain (the default): finalizer removed, nothing sent to the agent", async () => {
    const t = setup({ node: { ...DELETING, finalizers: ["other", LVMNODE_FINALIZER] } });
    await expect(t.reconciler.reconcile(KEY)).resolves.toBe("changed");
    expect(t.agents).toEqual([]);
    expect(t.kube.writes).toEqual([
      {
        verb: "PATCH",
        object: "LVMNode storage/n1",
        patch: { metadata: { resourceVersion: "101", finalizers: ["other"] } },
      },
    ]);
  });

  test("Delete: torn down (never forced, the node's own spec), then the finalizer removed and the LVMNode gone", async () => {
    const spec = { ...SPEC, deletionPolicy: "Delete" };
    const t = setup({ node: { ...DELETING, spec } });
    await expect(t.reconciler.reconcile(KEY)).resolves.toBe("changed");
    expect(t.agents).toEqual([{ call: "teardown", node: "n1", spec, before: ["GET LVMNode storage/n1"] }]);
    expect(t.stored()).toBeUndefined();
    expect(t.logs).toContainEqual({ msg: "torn down", lvmNode: KEY, pod: POD });
  });

  test("Delete refused (logical volumes in the way): finalizer kept, TeardownRefused, Terminating, thrown", async () => {
    const message =
      "node n1: teardown refused by agent pod lvm-system/agent-a (HTTP 409 VolumeGroupInUse): logical volumes vg1/data remain";
    const t = setup({
      node: { ...DELETING, spec: { ...SPEC, deletionPolicy: "Delete" } },
      teardown: { kind: "refused", volumes: ["vg1/data"], message },
    });
    await expect(t.reconciler.reconcile(KEY)).rejects.toThrow(AgentNotSyncedError);
    expect(t.stored()?.metadata.finalizers).toEqual([LVMNODE_FINALIZER]);
    expect(t.stored()?.status?.state).toBe("Terminating");
    expect(t.reconciled()).toMatchObject({
      status: "False",
      reason: "TeardownRefused",
      message: `deletionPolicy Delete: ${message}`,
    });
  });

  test("Delete, agent busy: thrown for a retry, no write, finalizer kept", async () => {
    const t = setup({
      node: { ...DELETING, spec: { ...SPEC, deletionPolicy: "Delete" } },
      teardown: { kind: "busy", message: "node n1: OperationInProgress" },
    });
    await expect(t.reconciler.reconcile(KEY)).rejects.toThrow(
      "storage/n1: node n1: OperationInProgress; retrying",
    );
    expect(t.kube.writes).toEqual([]);
  });

  test("Delete, the Node is gone: nothing to tear down, finalizer removed", async () => {
    const t = setup({
      node: { ...DELETING, spec: { ...SPEC, deletionPolicy: "Delete" } },
      nodeExists: false,
    });
    await expect(t.reconciler.reconcile(KEY)).resolves.toBe("changed");
    expect(t.agents).toEqual([]);
    expect(t.stored()).toBeUndefined();
    expect(t.logs).toContainEqual(
      expect.objectContaining({ msg: "finalized", note: "the Node is gone; nothing was torn down" }),
    );
  });

  test("without our finalizer: nothing to do", async () => {
    const t = setup({ node: { deletionTimestamp: "2044-10-22T16:00:00Z", finalizers: ["other"] } });
    await expect(t.reconciler.reconcile(KEY)).resolves.toBe("in_sync");
    expect(t.kube.writes).toEqual([]);
    expect(t.agents).toEqual([]);
  });
});

describe("LVMNodeReconciler: the operator stopping", () => {
  const stopped = { kind: "stopped", message: "node n1: not planned: the operator is stopping" } as const;

  test("the stop signal reaches the driver; stopped: thrown, no status write", async () => {
    const stop = new AbortController();
    const t = setup({ node: { finalizers: [LVMNODE_FINALIZER] }, sync: stopped });
    const error = await t.reconciler.reconcile(KEY, stop.signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReconcileStoppedError);
    expect((error as Error).message).toBe(`${KEY}: node n1: not planned: the operator is stopping`);
    expect(t.signals).toEqual([stop.signal]);
    expect(t.kube.writes).toEqual([]);
  });

  test("a teardown not started: thrown, the finalizer kept, no status write", async () => {
    const stop = new AbortController();
    const t = setup({
      node: { ...DELETING, spec: { ...SPEC, deletionPolicy: "Delete" } },
      teardown: { kind: "stopped", message: "node n1: teardown not started: the operator is stopping" },
    });
    await expect(t.reconciler.reconcile(KEY, stop.signal)).rejects.toThrow(ReconcileStoppedError);
    expect(t.signals).toEqual([stop.signal]);
    expect(t.kube.writes).toEqual([]);
    expect(t.stored()?.metadata.finalizers).toEqual([LVMNODE_FINALIZER]);
  });
});

describe("Events (events/recorder.ts) from the LVMNode reconcile", () => {
  /** A reconciler whose driver sends an apply (calls beforeChange) and answers `outcome`. */
  function withApply(outcome: SyncOutcome, status?: LVMNodeStatus) {
    const kube = new FakeKube();
    kube.put(LVM_NODES, {
      metadata: {
        name: "n1",
        namespace: "storage",
        generation: 2,
        ownerReferences: [controllerReference(FAST)],
        finalizers: [LVMNODE_FINALIZER],
      },
      spec: SPEC,
      ...(status ? { status } : {}),
    } as unknown as LVMNodeObject);
    let applies = true;
    const events: Array<{ type: string; reason: string; action: string; note: string }> = [];
    const reconciler = new LVMNodeReconciler({
      kube,
      agents: {
        sync: async (_to, _spec, _stop, beforeChange) => {
          if (applies) {
            const notNow = await beforeChange?.({ call: "apply", pod: POD, steps: 2 });
            if (notNow) return { kind: "busy", message: notNow };
            return outcome;
          }
          return { kind: "synced", pod: POD, applied: 0, status: AGENT_STATUS };
        },
        teardown: async () => ({ kind: "tornDown", pod: POD }),
      },
      node: (name) => ({ metadata: { name } }),
      sets: () => [{ ...FAST, spec: { template: SPEC } } as unknown as LVMNodeSetObject],
      lvmNodes: () => [],
      clock: new ManualClock(),
      log: () => undefined,
      record: ({ type, reason, action, note }) => events.push({ type, reason, action, note }),
    });
    return { kube, reconciler, events, noMoreApplies: () => (applies = false) };
  }

  test("an apply: ApplyStarted, then Applied; the next reconcile (nothing to do) records nothing", async () => {
    const t = withApply({ kind: "synced", pod: POD, applied: 2, status: AGENT_STATUS });
    await t.reconciler.reconcile(KEY);
    expect(t.events.map((e) => [e.type, e.reason])).toEqual([
      ["Normal", "ApplyStarted"],
      ["Normal", "Applied"],
    ]);
    expect(t.events[0]!.note).toBe(`node n1: agent pod ${POD} applies 2 planned step(s)`);
    t.noMoreApplies();
    await t.reconciler.reconcile(KEY); // Applied -> InSync: a status write, no event
    const before = t.events.length;
    await t.reconciler.reconcile(KEY);
    await t.reconciler.reconcile(KEY);
    expect(t.events).toHaveLength(before);
    expect(before).toBe(2);
  });

  test("a failed apply: ApplyStarted, ApplyFailed with the agent's message (the lvm error), and not AgentFailed twice", async () => {
    const message =
      "POST /v1/apply to agent pod lvm-system/agent-a answered HTTP 500: node n1: step 2 (vgextend vg1 /dev/vdc) failed: exit 5";
    const t = withApply({ kind: "failed", message });
    await expect(t.reconciler.reconcile(KEY)).rejects.toThrow(AgentNotSyncedError);
    expect(t.events).toEqual([
      expect.objectContaining({ reason: "ApplyStarted" }),
      { type: "Warning", reason: "ApplyFailed", action: "Apply", note: message },
    ]);
  });
});
