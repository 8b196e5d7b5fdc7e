import { APPROVE_ANNOTATION, lvmNodeSpecSchema, problemsFrom, type LVMNodeSpec } from "../../api";
import type { BeforeChange, NodeAgentDriver } from "../agents/driver";
import type { Clock } from "../../kube/clock";
import { jsonEqual } from "../../kube/json-equal";
import { isConflict } from "../../kube/errors";
import type { KubeClient } from "../../kube/client";
import { LVM_NODES } from "../../kube/resources";
import type { EventInput } from "../events/recorder";
import { statusEvents } from "./events";
import { lvmNodeStatus } from "./status";
import type { NodeFinding } from "./finding";
import { withLostClaims } from "./lost-claims";
import { mandateOf, teardownOf, type MandateView } from "../mandate";
import { splitKey, type ReconcileResult } from "../nodeset/reconciler";
import type { LVMNodeObject, LVMNodeSetObject, NodeObject } from "../types";

/** The finalizer on every LVMNode: its deletionPolicy is carried out on the node before it goes. */
export const LVMNODE_FINALIZER = "lvm.topolvm.io/node-agent";

export interface LVMNodeReconcilerOptions {
  readonly kube: KubeClient;
  readonly agents: NodeAgentDriver;
  /**
   * The Node of that name (the node informer's cache): only a node its set selects is driven, and a
   * deleted Node has nothing to tear down.
   */
  readonly node: (name: string) => NodeObject | undefined;
  /** Every LVMNodeSet the operator reconciles (its cache): only their LVMNodes are driven. */
  readonly sets: () => readonly LVMNodeSetObject[];
  /**
   * Reads the LVMNode from the operator's cache instead of the API server: a resync of N LVMNodes
   * then costs no GET (every write is guarded by the resourceVersion read, so a stale read ends in
   * a 409 and a retry, never in a lost write). @default a GET from the API server
   */
  readonly read?: (key: string) => LVMNodeObject | undefined;
  /** Every LVMNode the operator watches (its cache), to find overlapping sets. */
  readonly lvmNodes: () => readonly LVMNodeObject[];
  /**
   * Queues `key` again after `ms` (the LVMNode work queue). After an apply the LVMNode is checked
   * again at once: its status says Applied until a plan with nothing to do turns it to InSync, and
   * that write must follow the apply, not land one resync later in what looks like a quiet period.
   * @default no requeue (the next resync checks it)
   */
  readonly requeue?: (key: string, ms: number) => void;
  readonly clock: Clock;
  /** One structured log entry. */
  readonly log: (entry: Record<string, unknown>) => void;
  /**
   * Records an Event (events/recorder.ts: fire-and-forget, series, rate-limited): apply started,
   * applied, failed; teardown started, done; the Reconciled condition turning to a Warning reason;
   * devices newly claimed or excluded. @default none
   */
  readonly record?: (event: EventInput) => void;
}

/** The node's agent could not get the node to its spec (the status says why): retry with backoff. */
export class AgentNotSyncedError extends Error {
  override readonly name = "AgentNotSyncedError";
}

/** The operator stopped before the node's agent was done with it: nothing written; the next operator carries on. */
export class ReconcileStoppedError extends Error {
  override readonly name = "ReconcileStoppedError";
}

/**
 * Reconciles one LVMNode with its node's agent, in the fixed order: get (from the cache with `read`);
 * ignore not-found; carry out the deletionPolicy of its set for one being deleted (mandate.ts
 * teardownOf); refuse an LVMNode the operator has no mandate for (mandate.ts mandateOf: not
 * controlled by a set it reconciles, its node held by another set's LVMNode, not selected by its
 * set, or a spec that is not the set's template), which is never sent to an agent; ensure the
 * finalizer;
 * act (validate; plan, apply when there are steps and nothing is blocked, read the agent's status);
 * patch status, only when it changed. Throws after writing the status when the node is not in sync
 * (agent unavailable, failed, busy, teardown refused), so the queue retries with backoff. `stop`
 * (the operator's stop) aborts agent plan and status calls and keeps applies and teardowns from
 * starting; one already sent is waited for and its result written (docs/operator.md).
 */
export class LVMNodeReconciler {
  constructor(private readonly o: LVMNodeReconcilerOptions) {}

  /** `release`: called before an apply or teardown is sent (it may take hours): the queue frees the worker. */
  async reconcile(key: string, stop?: AbortSignal, release?: () => void): Promise<ReconcileResult> {
    const [namespace, name] = splitKey(key);
    let node = this.o.read
      ? this.o.read(key)
      : await this.o.kube.get<LVMNodeObject>(LVM_NODES, namespace, name);
    if (!node) return "not_found";
    if (node.metadata.deletionTimestamp) return this.finalize(node, stop, release);
    const mandate = mandateOf(node, this.view());
    if (!mandate.ok && mandate.reason === "SpecNotTemplate") {
      // The set's reconcile writes its template (it is queued by this LVMNode's change, and this
      // LVMNode again by the set's): not worth a status write each time a template changes.
      this.o.log({ msg: "not driven", lvmNode: key, reason: mandate.reason, message: mandate.message });
      return "in_sync";
    }
    if (!mandate.ok) {
      const wrote = await this.patchStatus(node, {
        kind: "notDriven",
        reason: mandate.reason,
        message: mandate.message,
      });
      if (wrote)
        this.o.log({ msg: "not driven", lvmNode: key, reason: mandate.reason, message: mandate.message });
      return wrote ? "changed" : "in_sync";
    }
    let wrote = false;
    if (!(node.metadata.finalizers ?? []).includes(LVMNODE_FINALIZER)) {
      const current = this.o.read ? await this.o.kube.get<LVMNodeObject>(LVM_NODES, namespace, name) : node;
      if (!current) return "not_found";
      node = (current.metadata.finalizers ?? []).includes(LVMNODE_FINALIZER)
        ? current
        : await this.setFinalizers(current, [...(current.metadata.finalizers ?? []), LVMNODE_FINALIZER]);
      wrote = true;
    }
    const spec = checkSpec(node);
    const sent: { call?: string } = {};
    const synced = spec.ok
      ? await this.o.agents.sync(
          { node: name, namespace },
          spec.value,
          stop,
          this.beforeChange(node, release, sent),
          { ...(approvalOf(node) ? { approved: approvalOf(node) } : {}), claimedBefore: claimedBefore(node) },
        )
      : spec.finding;
    // A waiting repair that loses volumes names the claims that use them (lost-claims.ts).
    const outcome =
      synced.kind === "awaiting"
        ? { ...synced, waiting: await withLostClaims(synced.waiting, this.o.kube) }
        : synced;
    const applyFailed = sent.call === "apply" && outcome.kind === "failed";
    if (applyFailed) this.event(node, "Warning", "ApplyFailed", "Apply", outcome.message);
    if (outcome.kind === "stopped") throw new ReconcileStoppedError(`${key}: ${outcome.message}`);
    if (outcome.kind === "busy") {
      // The previous outcome is no longer true: say that the agent is busy instead of keeping it.
      await this.patchStatus(node, outcome);
      throw new AgentNotSyncedError(`${key}: ${outcome.message}; retrying`);
    }
    if (outcome.kind === "synced" && outcome.applied > 0) {
      this.o.log({ msg: "applied", lvmNode: key, pod: outcome.pod, steps: outcome.applied });
      this.event(
        node,
        "Normal",
        "Applied",
        "Apply",
        `node ${name}: agent pod ${outcome.pod} applied ${outcome.applied} step(s); the node matches the spec`,
      );
      wrote = true;
      this.o.requeue?.(key, 0);
    }
    if (await this.patchStatus(node, outcome, applyFailed)) wrote = true;
    if (outcome.kind === "synced" && outcome.approved) await this.dropApproval(node, outcome.approved);
    if (outcome.kind === "unavailable" || outcome.kind === "failed")
      throw new AgentNotSyncedError(`${key}: ${outcome.message}`);
    return wrote ? "changed" : "in_sync";
  }

  /**
   * An approval is used once: once its plan is applied (and recorded in status.lastApproval), the
   * annotation goes, unless it was changed meanwhile (the patch is guarded by its value).
   */
  private async dropApproval(node: LVMNodeObject, hash: string): Promise<void> {
    const { namespace = "", name } = node.metadata;
    const fresh = await this.o.kube.get<LVMNodeObject>(LVM_NODES, namespace, name);
    if (fresh?.metadata.annotations?.[APPROVE_ANNOTATION] !== hash) return;
    await this.o.kube
      .patch(LVM_NODES, namespace, name, {
        metadata: {
          resourceVersion: fresh.metadata.resourceVersion,
          annotations: { [APPROVE_ANNOTATION]: null },
        },
      })
      .catch((e: unknown) => {
        // status.lastApproval already makes it unusable; a later reconcile removes it.
        if (!isConflict(e)) throw e;
      });
    this.o.log({ msg: "approval used", lvmNode: `${namespace}/${name}`, hash });
  }

  /** What the mandate reads: the operator's caches. */
  private view(): MandateView {
    return { sets: this.o.sets(), lvmNodes: this.o.lvmNodes(), node: this.o.node };
  }

  /**
   * Retain, a Node that is gone, or no mandate to tear down (mandate.ts teardownOf): remove the
   * finalizer. Delete: tear down (never forced), then remove it.
   */
  private async finalize(
    node: LVMNodeObject,
    stop?: AbortSignal,
    release?: () => void,
  ): Promise<ReconcileResult> {
    const key = `${node.metadata.namespace}/${node.metadata.name}`;
    if (!(node.metadata.finalizers ?? []).includes(LVMNODE_FINALIZER)) return "in_sync";
    const { tearDown, policy, why } = teardownOf(node, this.view());
    const nodeExists = this.o.node(node.metadata.name) !== undefined;
    if (why) {
      this.o.log({ msg: "not torn down", lvmNode: key, message: why });
      this.event(node, "Warning", "NotTornDown", "Teardown", why);
    }
    if (tearDown && nodeExists) {
      const spec = checkSpec(node);
      if (!spec.ok) return (await this.patchStatus(node, spec.finding)) ? "changed" : "in_sync";
      const outcome = await this.o.agents.teardown(
        { node: node.metadata.name, namespace: node.metadata.namespace ?? "" },
        spec.value,
        stop,
        this.beforeChange(node, release, {}),
      );
      if (outcome.kind === "stopped") throw new ReconcileStoppedError(`${key}: ${outcome.message}`);
      if (outcome.kind === "busy") throw new AgentNotSyncedError(`${key}: ${outcome.message}; retrying`);
      if (outcome.kind !== "tornDown") {
        await this.patchStatus(node, { kind: "teardown", outcome });
        throw new AgentNotSyncedError(`${key}: ${outcome.message}`);
      }
      this.o.log({ msg: "torn down", lvmNode: key, pod: outcome.pod });
      this.event(
        node,
        "Normal",
        "TornDown",
        "Teardown",
        `node ${node.metadata.name}: agent pod ${outcome.pod} tore down the volume groups (deletionPolicy Delete)`,
      );
    }
    await this.setFinalizers(
      node,
      (node.metadata.finalizers ?? []).filter((f) => f !== LVMNODE_FINALIZER),
    );
    this.o.log({
      msg: "finalized",
      lvmNode: key,
      deletionPolicy: policy,
      ...(nodeExists ? {} : { note: "the Node is gone; nothing was torn down" }),
    });
    return "changed";
  }

  /**
   * Before an apply or teardown: give the worker back (`release`), and when the LVMNode was read
   * from the cache, make sure it is still the one on the API server: nothing is sent to a node
   * from a stale read.
   */
  private beforeChange(
    node: LVMNodeObject,
    release: (() => void) | undefined,
    sent: { call?: string },
  ): BeforeChange {
    return async (change) => {
      release?.();
      const { namespace = "", name, generation, uid } = node.metadata;
      if (this.o.read) {
        const fresh = await this.o.kube.get<LVMNodeObject>(LVM_NODES, namespace, name);
        // The spec (generation), identity and deletion are what an apply or teardown acts on; our own
        // status writes (which the cache may not have yet) do not matter.
        const same =
          fresh?.metadata.uid === uid &&
          fresh?.metadata.generation === generation &&
          !!fresh?.metadata.deletionTimestamp === !!node.metadata.deletionTimestamp;
        if (!same)
          return `LVMNode ${namespace}/${name} changed since it was read (generation ${generation}, now ${fresh?.metadata.generation ?? "deleted"}); planning again`;
      }
      if (change) {
        sent.call = change.call;
        this.event(
          node,
          "Normal",
          change.call === "apply" ? "ApplyStarted" : "TeardownStarted",
          change.call === "apply" ? "Apply" : "Teardown",
          change.call === "apply"
            ? `node ${name}: agent pod ${change.pod} applies ${change.steps ?? "the"} planned step(s)`
            : `node ${name}: agent pod ${change.pod} tears down the volume groups (deletionPolicy Delete)`,
        );
      }
      return undefined;
    };
  }

  private event(
    node: LVMNodeObject,
    type: EventInput["type"],
    reason: string,
    action: string,
    note: string,
  ): void {
    this.o.record?.({
      regarding: {
        apiVersion: node.apiVersion ?? "lvm.topolvm.io/v2alpha1",
        kind: "LVMNode",
        metadata: node.metadata,
      },
      type,
      reason,
      action,
      note,
    });
  }

  private setFinalizers(node: LVMNodeObject, finalizers: string[]): Promise<LVMNodeObject> {
    const { namespace = "", name, resourceVersion } = node.metadata;
    return this.o.kube.patch<LVMNodeObject>(LVM_NODES, namespace, name, {
      metadata: { resourceVersion, finalizers },
    });
  }

  /**
   * Writes the status for `finding` when it differs from the LVMNode's; true when it wrote. The
   * write is guarded by the resourceVersion of the copy the status was computed from: a copy from
   * the cache that is behind (our own last write not seen yet) gets a 409, and only then is the
   * LVMNode read from the API server and the status computed again from that copy.
   */
  private async patchStatus(
    cached: LVMNodeObject,
    finding: NodeFinding,
    applyFailed = false,
  ): Promise<boolean> {
    let node = cached;
    let status = lvmNodeStatus(node, finding, this.o.clock.now());
    if (jsonEqual(status, node.status)) return false;
    const write = (from: LVMNodeObject) => {
      const { namespace = "", name, resourceVersion } = from.metadata;
      return this.o.kube.patch(
        LVM_NODES,
        namespace,
        name,
        // A merge patch keeps what it does not name: a plan no longer waiting is removed by name.
        {
          metadata: { resourceVersion },
          status: {
            ...status,
            ...(from.status?.pendingApproval && !status.pendingApproval ? { pendingApproval: null } : {}),
          },
        },
        "status",
      );
    };
    try {
      await write(node);
    } catch (e) {
      if (!this.o.read || !isConflict(e)) throw e;
      const fresh = await this.o.kube.get<LVMNodeObject>(
        LVM_NODES,
        node.metadata.namespace ?? "",
        node.metadata.name,
      );
      if (!fresh) return false;
      node = fresh;
      status = lvmNodeStatus(node, finding, this.o.clock.now());
      if (jsonEqual(status, node.status)) return false;
      await write(node);
    }
    const { namespace = "", name } = node.metadata;
    for (const e of statusEvents(node.status, status, applyFailed))
      this.event(node, e.type, e.reason, e.action, e.note);
    const was = node.status?.conditions?.find((c) => c.type === "Reconciled");
    const now = status.conditions?.find((c) => c.type === "Reconciled");
    if (was?.reason !== now?.reason || was?.status !== now?.status)
      this.o.log({
        msg: "condition changed",
        lvmNode: `${namespace}/${name}`,
        state: status.state,
        condition: now,
      });
    return true;
  }
}

/** The approval the LVMNode carries (APPROVE_ANNOTATION), unless it was used already. */
function approvalOf(node: LVMNodeObject): string | undefined {
  const hash = node.metadata.annotations?.[APPROVE_ANNOTATION]?.trim();
  return hash && hash !== node.status?.lastApproval?.hash ? hash : undefined;
}

/** The devices (paths and stable ids) the LVMNode's status shows in its volume groups. */
function claimedBefore(node: LVMNodeObject): Set<string> {
  return new Set(
    (node.status?.volumeGroups ?? []).flatMap((vg) =>
      (vg.devices?.included ?? []).flatMap((d) => [d.kname, ...(d.id ? [d.id] : [])]),
    ),
  );
}

/** The spec through our own validation (rules the CRD cannot express): never sent when it fails. */
function checkSpec(
  node: LVMNodeObject,
): { ok: true; value: LVMNodeSpec } | { ok: false; finding: Extract<NodeFinding, { kind: "invalid" }> } {
  const r = lvmNodeSpecSchema.safeParse(node.spec);
  if (r.success) return { ok: true, value: r.data };
  return {
    ok: false,
    finding: {
      kind: "invalid",
      problems: problemsFrom(r.error, ["spec"]).map((p) => `${p.path}: ${p.message}`),
    },
  };
}
