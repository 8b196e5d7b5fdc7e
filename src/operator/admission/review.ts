import { checkManifest, deletionPolicyOf, problemLine, type ValidationProblem } from "../../api";
import { guardedNodeSets } from "../../agent-api/admission";
import type { LVMNodeObject, LVMNodeSetObject, NodeObject } from "../types";
import {
  controlsAnyLVMNode,
  deletionProblems,
  volumesOnSet,
  type LogicalVolumeObject,
  type PersistentVolumeObject,
} from "./in-use";
import { lvmNodeWriteProblems } from "./lvmnode-writes";
import { overlapProblems } from "./overlap";

/** Who sent a request, as the API server's AdmissionReview names them. */
export interface RequestUser {
  readonly username?: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** The part of an admission.k8s.io/v1 AdmissionRequest the webhook reads. */
export interface AdmissionRequest {
  readonly uid: string;
  readonly kind: { readonly group: string; readonly version: string; readonly kind: string };
  readonly operation: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly object?: unknown;
  /** The stored object, on an update or a delete. */
  readonly oldObject?: unknown;
  readonly userInfo?: RequestUser;
}

/** The webhook's answer: allowed, or refused with one line per problem (as `pulumi-lvm validate` prints them). */
export type AdmissionVerdict =
  { readonly allowed: true } | { readonly allowed: false; readonly code: number; readonly message: string };

/** What the webhook reads of the cluster: AdmissionCache (reads.ts), from informers. */
export interface AdmissionReads {
  /** The LVMNodeSets the operator serves (its namespace, or all). */
  nodeSets(): Promise<LVMNodeSetObject[]>;
  nodes(): Promise<NodeObject[]>;
  nodeSet(namespace: string, name: string): Promise<LVMNodeSetObject | undefined>;
  /** The LVMNodes in `namespace`. */
  lvmNodes(namespace: string): Promise<LVMNodeObject[]>;
  /** TopoLVM's LogicalVolumes; undefined when its API is not installed (no volume can exist). */
  logicalVolumes(): Promise<LogicalVolumeObject[] | undefined>;
  persistentVolume(name: string): Promise<PersistentVolumeObject | undefined>;
  /** A SubjectAccessReview: may `user` approve plans of that LVMNode (approvals.ts)? */
  canApprove(user: RequestUser, namespace: string, name: string): Promise<boolean>;
}

/**
 * The verdict on a create or spec change of an LVMNodeSet or LVMNode (the operator's own writes do
 * not reach the webhook: its configuration's matchConditions):
 * - every API rule, by `checkManifest`, the function `pulumi-lvm validate` runs, so the messages are
 *   the same lines — this covers the rules the CRDs' CEL cannot express;
 * - an LVMNodeSet: none of the Nodes it newly selects is selected by another set (overlap.ts);
 * - an LVMNode: refused, a create or spec or ownerReferences change by anyone but the operator
 *   (lvmnode-writes.ts; the ValidatingAdmissionPolicy refuses the same first).
 */
export async function review(request: AdmissionRequest, reads: AdmissionReads): Promise<AdmissionVerdict> {
  if (request.operation === "DELETE") return reviewDeletion(request, reads);
  if (request.kind?.kind === "LVMNode") {
    // Who writes comes before what is written: no read, no validation.
    const written = lvmNodeWriteProblems(request.userInfo?.username);
    const name = (request.object as LVMNodeObject | undefined)?.metadata?.name ?? request.name ?? "";
    return written.length ? refuse("LVMNode", name, written, 403) : { allowed: true };
  }
  const object = withNamespace(request.object, request.namespace);
  const { kind, name, problems } = checkManifest(object);
  if (problems.length) return refuse(kind, name, problems);
  if (kind === "LVMNodeSet") {
    const set = object as LVMNodeSetObject;
    const [sets, nodes] = await Promise.all([reads.nodeSets(), reads.nodes()]);
    const previous = request.operation === "UPDATE" ? (request.oldObject as LVMNodeSetObject) : undefined;
    const overlaps = overlapProblems(set, sets, nodes, previous);
    return overlaps.length ? refuse(kind, name, overlaps) : { allowed: true };
  }
  return { allowed: true };
}

/**
 * The verdict on deleting an LVMNodeSet, or a deletion guard listing sets (deletionGuard): refused
 * while a set with deletionPolicy Delete has TopoLVM volumes in its volume groups (in-use.ts),
 * naming each with its PersistentVolume and claim; its finalizer would otherwise keep it Terminating
 * until they are gone, the agents refusing the teardown (docs/operator.md, Deletion). Retain,
 * anything else, and no TopoLVM API: allowed. A deletion is never refused for what the spec says.
 */
async function reviewDeletion(request: AdmissionRequest, reads: AdmissionReads): Promise<AdmissionVerdict> {
  let sets: LVMNodeSetObject[];
  if (request.kind.kind === "ConfigMap") {
    const names = guardedNodeSets(request.oldObject);
    const found = await Promise.all(names.map((n) => reads.nodeSet(request.namespace ?? "", n)));
    sets = found.filter((s): s is LVMNodeSetObject => !!s && !s.metadata.deletionTimestamp);
  } else {
    const set = withNamespace(request.oldObject, request.namespace) as LVMNodeSetObject | undefined;
    sets = request.kind.kind === "LVMNodeSet" && set?.metadata?.name ? [set] : [];
  }
  const lines: string[] = [];
  for (const set of sets)
    for (const p of await inUseProblems(set, reads))
      lines.push(problemLine("LVMNodeSet", set.metadata.name, p));
  return lines.length ? { allowed: false, code: 422, message: lines.join("\n") } : { allowed: true };
}

/** The volumes a deletion of `set` would have to destroy, as problems; none with Retain (no read). */
async function inUseProblems(set: LVMNodeSetObject, reads: AdmissionReads): Promise<ValidationProblem[]> {
  if (deletionPolicyOf(set.spec?.template ?? {}) !== "Delete") return [];
  const lvmNodes = await reads.lvmNodes(set.metadata.namespace ?? "");
  // No LVMNode of this set (none made yet, or a forged review's made-up set): no volume to look for.
  if (!controlsAnyLVMNode(set, lvmNodes)) return [];
  const onSet = volumesOnSet(set, lvmNodes, (await reads.logicalVolumes()) ?? []);
  if (onSet.length === 0) return [];
  const names = [...new Set(onSet.map((v) => v.volume.spec?.name ?? v.volume.metadata.name))];
  const found = await Promise.all(names.map((n) => reads.persistentVolume(n)));
  const pvs = new Map(found.flatMap((pv) => (pv ? [[pv.metadata.name, pv] as const] : [])));
  return deletionProblems(set, onSet, pvs);
}

function refuse(
  kind: string,
  name: string,
  problems: readonly ValidationProblem[],
  code = 422,
): AdmissionVerdict {
  return { allowed: false, code, message: problems.map((p) => problemLine(kind, name, p)).join("\n") };
}

/** The request's namespace on the object (a create's body may leave it to the URL). */
function withNamespace(object: unknown, namespace: string | undefined): unknown {
  if (typeof object !== "object" || object === null || !namespace) return object;
  const o = object as { metadata?: Record<string, unknown> };
  return { ...o, metadata: { ...o.metadata, namespace: o.metadata?.namespace ?? namespace } };
}
