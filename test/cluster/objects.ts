/**
 * Creating and waiting for Kubernetes objects in the cluster tier's tests, over the control plane's
 * request() (test/env/cluster.ts): the REST path of an object from its apiVersion and kind, create
 * (or replace) in one call, and a poll that fails with the last state it saw.
 */
import type { ControlPlane, Json } from "../env/cluster";

/** Plural resource names of the kinds the tests create (the REST path needs them). */
const PLURALS: Record<string, string> = {
  Namespace: "namespaces",
  Pod: "pods",
  PersistentVolumeClaim: "persistentvolumeclaims",
  ConfigMap: "configmaps",
  Secret: "secrets",
  Service: "services",
  ServiceAccount: "serviceaccounts",
  DaemonSet: "daemonsets",
  Deployment: "deployments",
  StatefulSet: "statefulsets",
  StorageClass: "storageclasses",
  CSIDriver: "csidrivers",
  ClusterRole: "clusterroles",
  ClusterRoleBinding: "clusterrolebindings",
  Role: "roles",
  RoleBinding: "rolebindings",
  PriorityClass: "priorityclasses",
  PodDisruptionBudget: "poddisruptionbudgets",
  CustomResourceDefinition: "customresourcedefinitions",
  MutatingWebhookConfiguration: "mutatingwebhookconfigurations",
  VolumeSnapshotClass: "volumesnapshotclasses",
  VolumeSnapshot: "volumesnapshots",
  LVMNodeSet: "lvmnodesets",
  LVMNode: "lvmnodes",
};
const CLUSTER_SCOPED = new Set([
  "Namespace",
  "StorageClass",
  "CSIDriver",
  "ClusterRole",
  "ClusterRoleBinding",
  "PriorityClass",
  "CustomResourceDefinition",
  "MutatingWebhookConfiguration",
  "VolumeSnapshotClass",
]);

/** The collection path of an object's kind (in its namespace, if namespaced). */
export function collectionPath(obj: {
  apiVersion: string;
  kind: string;
  metadata?: { namespace?: string };
}): string {
  const plural = PLURALS[obj.kind];
  if (!plural) throw new Error(`objects.ts: no plural known for kind ${obj.kind} (add it to PLURALS)`);
  const base = obj.apiVersion.includes("/") ? `/apis/${obj.apiVersion}` : `/api/${obj.apiVersion}`;
  const ns = CLUSTER_SCOPED.has(obj.kind) ? "" : `/namespaces/${obj.metadata?.namespace ?? "default"}`;
  return `${base}${ns}/${plural}`;
}

/** Creates the object, or replaces it when it exists; throws with the apiserver's message. */
export async function apply(cp: ControlPlane, obj: Json): Promise<Json> {
  const coll = collectionPath(obj);
  const created = await cp.request("POST", coll, obj);
  if (created.status === 201 || created.status === 200) return created.body;
  if (created.status === 409) {
    const url = `${coll}/${obj.metadata.name}`;
    const current = await cp.request("GET", url);
    const replaced = await cp.request("PUT", url, {
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: current.body.metadata.resourceVersion },
    });
    if (replaced.status === 200) return replaced.body;
    throw new Error(
      `replacing ${obj.kind} ${obj.metadata.name}: HTTP ${replaced.status}: ${JSON.stringify(replaced.body)}`,
    );
  }
  throw new Error(
    `creating ${obj.kind} ${obj.metadata?.name}: HTTP ${created.status}: ${JSON.stringify(created.body)}`,
  );
}

export async function applyAll(cp: ControlPlane, objs: readonly Json[]): Promise<void> {
  for (const o of objs) await apply(cp, o);
}

export async function get(cp: ControlPlane, path: string): Promise<Json | undefined> {
  const r = await cp.request("GET", path);
  if (r.status === 404) return undefined;
  if (r.status !== 200) throw new Error(`GET ${path}: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

/** The pods of `namespace` (every namespace's when it is undefined). */
export async function podsIn(cp: ControlPlane, namespace?: string): Promise<Json[]> {
  const path = namespace === undefined ? "/api/v1/pods" : `/api/v1/namespaces/${namespace}/pods`;
  return ((await get(cp, path))?.items ?? []) as Json[];
}

/**
 * One pod for a failure's report: namespace/name, the start of its uid (a replaced pod has a new
 * one), phase, and each container's readiness, restarts, state, and why it last ended (OOMKilled, a
 * liveness kill's exit 137, an error: a restart count alone cannot tell a crash from the kubelet's kill).
 */
export function podLine(p: Json): string {
  const containers = ((p.status?.containerStatuses ?? []) as Json[]).map((c) => {
    const last = c.lastState?.terminated as Json | undefined;
    const ended = last ? ` (last ended: ${last.reason ?? "?"}, exit ${last.exitCode ?? "?"})` : "";
    return `${c.name} ready=${c.ready} restarts=${c.restartCount} ${Object.keys(c.state ?? {})[0]}${ended}`;
  });
  const uid = String(p.metadata.uid ?? "").slice(0, 8);
  return `${p.metadata.namespace}/${p.metadata.name} [${uid}] ${p.status?.phase}: ${containers.join(", ")}`;
}

export async function remove(cp: ControlPlane, path: string): Promise<void> {
  const r = await cp.request("DELETE", path);
  if (r.status !== 200 && r.status !== 202 && r.status !== 404) {
    throw new Error(`DELETE ${path}: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `read` until `done` holds; throws after `timeoutMs` with what it saw last and `why()`
 * (e.g. the object's events, the node's logs).
 */
export async function waitFor<T>(
  what: string,
  read: () => Promise<T>,
  done: (v: T) => boolean,
  timeoutMs: number,
  why?: () => Promise<string>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline) {
      const extra = why ? `\n${await why().catch((e: Error) => e.message)}` : "";
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(v)?.slice(0, 3000)}${extra}`,
      );
    }
    await sleep(1000);
  }
}

/** The events of one object, oldest first, as "reason: message" lines. */
export async function eventsOf(cp: ControlPlane, namespace: string, name: string): Promise<string[]> {
  const r = await cp.request(
    "GET",
    `/api/v1/namespaces/${namespace}/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${name}`)}`,
  );
  const items: Json[] = r.body?.items ?? [];
  return items.map((e) => `${e.type} ${e.reason}: ${e.message}`);
}

/** Waits for a pod to reach one of `phases`; the error carries its events and status. */
export async function waitPodPhase(
  cp: ControlPlane,
  namespace: string,
  name: string,
  phases: readonly string[],
  timeoutMs: number,
): Promise<Json> {
  return waitFor(
    `pod ${namespace}/${name} in ${phases.join("/")}`,
    () => get(cp, `/api/v1/namespaces/${namespace}/pods/${name}`),
    (p) => phases.includes(p?.status?.phase),
    timeoutMs,
    async () => (await eventsOf(cp, namespace, name)).join("\n"),
  );
}

/** Waits until a namespace has at least `atLeast` pods and every one is Running with all containers ready. */
export async function waitPodsReady(
  cp: ControlPlane,
  namespace: string,
  atLeast: number,
  timeoutMs: number,
  why?: () => Promise<string>,
): Promise<Json[]> {
  return waitFor(
    `${atLeast}+ pods in ${namespace} Running and ready`,
    () => podsIn(cp, namespace),
    (pods) =>
      pods.length >= atLeast &&
      pods.every(
        (p) =>
          p.status?.phase === "Running" && (p.status.containerStatuses ?? []).every((s: Json) => s.ready),
      ),
    timeoutMs,
    why,
  );
}
