import { deletionPolicyOf } from "../api";
import { jsonEqual } from "../kube/json-equal";
import { matchesNodeSelector } from "../planner/node-selector";
import { desiredSpec } from "./nodeset/desired";
import { controllingSet, describeController, holdsBefore } from "./ownership";
import type { LVMNodeObject, LVMNodeSetObject, NodeObject } from "./types";

/**
 * Whether the operator may drive an LVMNode's node, or tear it down: decided from the operator's
 * caches alone, never from what the LVMNode claims about itself. Admission refuses LVMNodes written
 * by anyone but the operator (docs/operator.md, Admission); this holds when admission does not
 * (the webhook down or bypassed, the policy not installed). Pure.
 */

/** What the operator's caches hold, for one LVMNode's mandate. */
export interface MandateView {
  /** Every LVMNodeSet the operator reconciles. */
  readonly sets: readonly LVMNodeSetObject[];
  /** Every LVMNode the operator watches (to find another set's LVMNode for the same node). */
  readonly lvmNodes: readonly LVMNodeObject[];
  /** The Node of that name (the node informer's cache), undefined when it does not exist. */
  readonly node: (name: string) => NodeObject | undefined;
}

/** Why an LVMNode is not sent to its agent (its Reconciled reason). */
export type NotDrivenReason = "NotManaged" | "NodeSetOverlap" | "NotSelected" | "SpecNotTemplate";

export type Mandate =
  | { readonly ok: true; readonly set: LVMNodeSetObject }
  | { readonly ok: false; readonly reason: NotDrivenReason; readonly message: string };

/**
 * Whose LVMNode this is: controlled (by uid) by an LVMNodeSet the operator reconciles, and of two
 * such LVMNodes for the same node (overlapping sets in two namespaces), the one that holds the node
 * (`holdsBefore`: the LVMNode there first; in the same second, the older set). Both driving and
 * tearing down need it.
 */
export function ownerOf(node: LVMNodeObject, view: MandateView): Mandate {
  const key = `${node.metadata.namespace}/${node.metadata.name}`;
  const set = controllingSet(node, view.sets);
  if (!set)
    return {
      ok: false,
      reason: "NotManaged",
      message: `LVMNode ${key} is not controlled by an LVMNodeSet this operator reconciles (${describeController(node)}); nothing is sent to node ${node.metadata.name}'s agent, and deleting it tears nothing down`,
    };
  for (const other of view.lvmNodes) {
    if (other.metadata.name !== node.metadata.name || other.metadata.namespace === node.metadata.namespace)
      continue;
    const rival = controllingSet(other, view.sets);
    if (rival && holdsBefore(other, rival, node, set))
      return {
        ok: false,
        reason: "NodeSetOverlap",
        message: `node ${node.metadata.name} is also selected by LVMNodeSet ${rival.metadata.namespace}/${rival.metadata.name} (LVMNode ${other.metadata.namespace}/${other.metadata.name}), which keeps it (its LVMNode was there first); nothing is sent to the node's agent for ${key} until the sets no longer overlap`,
      };
  }
  return { ok: true, set };
}

/**
 * Whether a live LVMNode is sent to its agent: its owner (`ownerOf`), whose nodeSelector selects
 * the Node (it exists and is not being deleted), and its spec is exactly that set's template (the
 * set reconcile writes it; a spec written by anyone else is never applied, the set puts its
 * template back).
 */
export function mandateOf(node: LVMNodeObject, view: MandateView): Mandate {
  const owner = ownerOf(node, view);
  if (!owner.ok) return owner;
  const { set } = owner;
  const key = `${node.metadata.namespace}/${node.metadata.name}`;
  const setKey = `${set.metadata.namespace}/${set.metadata.name}`;
  if (!selects(set, view.node(node.metadata.name)))
    return {
      ok: false,
      reason: "NotSelected",
      message: `node ${node.metadata.name} is not selected by LVMNodeSet ${setKey} (its nodeSelector does not match the Node, or the Node is gone); nothing is sent to the node's agent for ${key}, and the set deletes it once the node has been out of its selector for the deselection grace`,
    };
  if (!jsonEqual(node.spec, desiredSpec(set)))
    return {
      ok: false,
      reason: "SpecNotTemplate",
      message: `LVMNode ${key}'s spec is not LVMNodeSet ${setKey}'s template; nothing is sent to node ${node.metadata.name}'s agent until the set's reconcile has written its template`,
    };
  return owner;
}

/** What the deletion of an LVMNode does on its node (its finalizer). */
export interface Teardown {
  /** True: tear down (the node's volume groups of the spec, never forced). */
  readonly tearDown: boolean;
  /** The controlling set's deletionPolicy; without an owner, the one the LVMNode claims (logs only). */
  readonly policy: "Retain" | "Delete";
  /** Why a Delete asked for is not carried out (for a log line and a Warning Event). */
  readonly why?: string;
}

/**
 * The deletion of an LVMNode tears its node down only when its owner (`ownerOf`) says
 * `deletionPolicy: Delete` in its template (the LVMNode's own field is not read: it is the set's
 * word, not the LVMNode writer's), the LVMNode's spec is that template (what the user saw), and the
 * operator drove it: the set selects the node, or the node was deselected after the agent reported
 * volume groups for it (status, written only by the operator), and the Node still exists.
 * Anything else: the finalizer goes, the disks stay as they are.
 */
export function teardownOf(node: LVMNodeObject, view: MandateView): Teardown {
  const owner = ownerOf(node, view);
  if (!owner.ok) {
    const policy = deletionPolicyOf(node.spec ?? {});
    return { tearDown: false, policy, ...(policy === "Delete" ? { why: owner.message } : {}) };
  }
  const { set } = owner;
  const policy = deletionPolicyOf(set.spec.template);
  // A Node that is gone has nothing left to tear down (the reconciler says so in its log line).
  if (policy !== "Delete" || !view.node(node.metadata.name)) return { tearDown: false, policy };
  const setKey = `${set.metadata.namespace}/${set.metadata.name}`;
  const name = node.metadata.name;
  if (!jsonEqual(node.spec, desiredSpec(set)))
    return {
      tearDown: false,
      policy,
      why: `LVMNode ${node.metadata.namespace}/${name}'s spec is not LVMNodeSet ${setKey}'s template; nothing on node ${name} is torn down`,
    };
  const driven = (node.status?.volumeGroups?.length ?? 0) > 0;
  if (!driven && !selects(set, view.node(name)))
    return {
      tearDown: false,
      policy,
      why: `node ${name} is not selected by LVMNodeSet ${setKey} and its agent never reported a volume group for this LVMNode; nothing on node ${name} is torn down`,
    };
  return { tearDown: true, policy };
}

/** Whether `set` selects the Node (it exists and is not being deleted). */
function selects(set: LVMNodeSetObject, node: NodeObject | undefined): boolean {
  if (!node || node.metadata.deletionTimestamp) return false;
  return matchesNodeSelector(set.spec.nodeSelector, {
    name: node.metadata.name,
    labels: node.metadata.labels ?? {},
  });
}
