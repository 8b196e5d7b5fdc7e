import { APPROVE_ANNOTATION, RECONCILE_REQUEST_ANNOTATION } from "../../api";
import { AGENT_POD_LABELS } from "../../agent-api/pods";
import { podSchema } from "../../agent-client/agent-pods";
import type { Change } from "../../kube/informer";
import { objectKey } from "../../kube/informer";
import { jsonEqual } from "../../kube/json-equal";
import type { KubeObject } from "../../kube/client";
import { isControlledBy } from "../ownership";
import type { LVMNodeObject, LVMNodeSetObject } from "../types";

/**
 * Which LVMNodes to reconcile for a change (pure). The LVMNode work queue is fed by these; the
 * periodic resync adds every LVMNode on top, for drift on the nodes that no watch reports.
 */

/**
 * An LVMNode's own change: new, or changed in spec (generation), deletion, finalizers, its
 * approval annotation or its reconcile-request annotation. Not its status.
 */
export function keysForOwnLVMNodeChange(change: Change<LVMNodeObject>): string[] {
  const { object: now, old } = change;
  if (change.type === "deleted") return [];
  if (change.type === "added" || !old) return [objectKey(now)];
  const m = (o: LVMNodeObject) => [
    o.metadata.generation,
    o.metadata.deletionTimestamp,
    o.metadata.finalizers,
    o.metadata.annotations?.[APPROVE_ANNOTATION],
    o.metadata.annotations?.[RECONCILE_REQUEST_ANNOTATION],
  ];
  return jsonEqual(m(old), m(now)) ? [] : [objectKey(now)];
}

/**
 * An LVMNode added or gone (or going): the LVMNodes of the same node in other namespaces, whose
 * mandate (ownership.ts mandateOf: overlapping sets) may change with it.
 */
export function keysForRivalLVMNodes(
  change: Change<LVMNodeObject>,
  lvmNodes: readonly LVMNodeObject[],
): string[] {
  const { object: now, old } = change;
  if (change.type === "updated" && !!old?.metadata.deletionTimestamp === !!now.metadata.deletionTimestamp)
    return [];
  return lvmNodes
    .filter((n) => n.metadata.name === now.metadata.name && n.metadata.namespace !== now.metadata.namespace)
    .map(objectKey)
    .sort();
}

/**
 * An agent pod's change that may make its node's agent callable or not (added, deleted, phase,
 * pod IP, Ready): the LVMNodes named after its node, in every namespace watched.
 */
export function keysForAgentPodChange(
  change: Change<KubeObject>,
  lvmNodes: readonly LVMNodeObject[],
): string[] {
  const now = agentPod(change.object);
  const old = change.old ? agentPod(change.old) : undefined;
  const node = now?.node ?? old?.node;
  if (!node) return [];
  if (change.type === "updated" && now && old && jsonEqual(now, old)) return [];
  return lvmNodes
    .filter((n) => n.metadata.name === node)
    .map(objectKey)
    .sort();
}

/** A Node deleted: its LVMNodes (a finalizer waiting for its agent can go: nothing is left to tear down). */
export function keysForNodeDeleted(change: Change<KubeObject>, lvmNodes: readonly LVMNodeObject[]): string[] {
  if (change.type !== "deleted") return [];
  return lvmNodes
    .filter((n) => n.metadata.name === change.object.metadata.name)
    .map(objectKey)
    .sort();
}

/**
 * A set's change that may give or take the mandate of LVMNodes (mandate.ts): a set added or gone,
 * every LVMNode of its namespace (its controller reference may name it); a change of its spec
 * (generation: template, nodeSelector), the LVMNodes it controls.
 */
export function keysForControllingSetChange(
  change: Change<LVMNodeSetObject>,
  lvmNodes: readonly LVMNodeObject[],
): string[] {
  const { object: set, old } = change;
  const namespace = set.metadata.namespace;
  if (change.type === "updated" && old?.metadata.generation === set.metadata.generation) return [];
  return lvmNodes
    .filter((n) => n.metadata.namespace === namespace)
    .filter((n) => change.type !== "updated" || isControlledBy(n, set))
    .map(objectKey)
    .sort();
}

/** A Node added, or its labels or deletion changed: the LVMNodes named after it (is it still selected?). */
export function keysForNodeSelectionChange(
  change: Change<KubeObject>,
  lvmNodes: readonly LVMNodeObject[],
): string[] {
  const { object: now, old } = change;
  if (change.type === "deleted") return [];
  const m = (o: KubeObject) => [o.metadata.labels ?? {}, !!o.metadata.deletionTimestamp];
  if (change.type === "updated" && old && jsonEqual(m(old), m(now))) return [];
  return lvmNodes
    .filter((n) => n.metadata.name === now.metadata.name)
    .map(objectKey)
    .sort();
}

/** What of a pod matters to calling its agent; undefined for a pod that is not an agent. */
function agentPod(o: KubeObject) {
  const labels = o.metadata.labels ?? {};
  if (!Object.entries(AGENT_POD_LABELS).every(([k, v]) => labels[k] === v)) return undefined;
  const pod = podSchema.safeParse(o);
  if (!pod.success) return undefined;
  const { spec, status, metadata } = pod.data;
  return {
    node: spec.nodeName,
    deleting: !!metadata.deletionTimestamp,
    phase: status?.phase,
    ip: status?.podIP,
    ready: (status?.conditions ?? []).find((c) => c.type === "Ready")?.status,
  };
}
