import { AGENT_POD_LABELS, OPERATOR_POD_LABELS } from "../agent-api/pods";
import { LVM_NODE_SETS, LVM_NODES, resourcePath } from "../kube/resources";
import { fileSegment, type BundleCollector } from "./bundle-collector";
import { agentsView, type BundlePod } from "./bundle-agents";

/** What the support bundle reads, and how much of each log. */
export interface BundleSourceOptions {
  /** Only this namespace's LVMNodeSets, LVMNodes, pods and events. @default all namespaces */
  readonly namespace?: string;
  /** The last lines of each container's log. */
  readonly tailLines: number;
  /** At most this many bytes of each container's log. */
  readonly limitBytes: number;
}

interface List<T = Record<string, unknown>> {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly items?: T[];
}

/** The CRDs whose versions the bundle records: ours and TopoLVM's. */
export const BUNDLE_CRDS = [
  "lvmnodesets.lvm.topolvm.io",
  "lvmnodes.lvm.topolvm.io",
  "logicalvolumes.topolvm.io",
] as const;

/** TopoLVM's pods, as its Helm chart labels them (LvmSystem installs it in its own namespace). */
export const TOPOLVM_POD_LABELS = { "app.kubernetes.io/name": "topolvm" } as const;

/** Why the agents' own HTTP API is not in the bundle (the manifest says it). */
export const AGENT_API_NOT_COLLECTED =
  "each agent answers only a short-lived token minted for its own node (a TokenRequest for a service account allowed to call it), " +
  "and the bundle makes no such write with your credentials; agents/nodes.json has what each agent reported to the cluster " +
  "(its LVMNode's status: volume groups, devices, thin pools, device classes, approvals, conditions)";

/** The cluster-wide lists: file, what, path, and whether a 404 (an API this cluster does not serve) is normal. */
const CLUSTER_LISTS = [
  ["cluster/storageclasses.json", "StorageClasses", "/apis/storage.k8s.io/v1/storageclasses", false],
  [
    "cluster/volumesnapshotclasses.json",
    "VolumeSnapshotClasses",
    "/apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses",
    true,
  ],
  ["cluster/csinodes.json", "CSINodes", "/apis/storage.k8s.io/v1/csinodes", false],
  ["topolvm/logicalvolumes.json", "TopoLVM LogicalVolumes", "/apis/topolvm.io/v1/logicalvolumes", true],
] as const;

/** The cluster-wide single objects, as CLUSTER_LISTS. */
const CLUSTER_OBJECTS = [
  [
    "cluster/csidriver-topolvm.io.json",
    "CSIDriver topolvm.io",
    "/apis/storage.k8s.io/v1/csidrivers/topolvm.io",
    true,
  ],
] as const;

const UNREACHABLE =
  "the API server gave no answer to the first request (/version), so nothing else was tried";

/** Collects every part of the bundle into `c`; each read that fails is recorded, none ends it. */
export async function collectBundle(c: BundleCollector, o: BundleSourceOptions): Promise<void> {
  const ns = o.namespace;
  const version = await c.read("the API server's version", "/version");
  if (version)
    c.addJson("cluster/version.json", version, { what: "the API server's version", path: "/version" });
  else if (c.failed.some((f) => f.path === "/version" && f.status === 0))
    // No answer at all: each further request would wait as long for nothing.
    return void c.notCollected.push({ what: "everything else", why: UNREACHABLE });
  for (const [file, what, path, absentIsNormal] of CLUSTER_OBJECTS) {
    const object = await c.read(what, path, { absentIsNormal });
    if (object) c.addJson(file, object, { what, path });
  }
  await collectCrds(c);
  for (const [file, what, path, absentIsNormal] of CLUSTER_LISTS)
    await listInto(c, file, what, path, absentIsNormal);
  const sets = await listInto(c, "lvm/lvmnodesets.json", "LVMNodeSets", resourcePath(LVM_NODE_SETS, ns));
  const nodes = await listInto(c, "lvm/lvmnodes.json", "LVMNodes", resourcePath(LVM_NODES, ns));
  const { operator, agents, topolvm } = await collectWorkloads(c, ns);
  if (nodes)
    c.addJson("agents/nodes.json", agentsView(nodes, agents), {
      what: "what each agent reported to the cluster (its LVMNode's status) and its pod",
      path: resourcePath(LVM_NODES, ns),
      count: nodes.length,
    });
  c.notCollected.push({
    what: "the agents' own HTTP API (through the API server's pod proxy)",
    why: AGENT_API_NOT_COLLECTED,
  });
  const operatorNamespaces = new Set(operator.map((p) => p.metadata.namespace ?? ""));
  await collectEvents(c, ns, [...(sets ?? []), ...(nodes ?? [])].length > 0, operatorNamespaces);
  for (const pod of [...operator, ...agents, ...topolvm]) await collectLogs(c, pod, o);
}

/** The operator's Deployments and pods, the agents' DaemonSets and pods, TopoLVM's pods; the pods. */
async function collectWorkloads(
  c: BundleCollector,
  ns: string | undefined,
): Promise<{ operator: BundlePod[]; agents: BundlePod[]; topolvm: BundlePod[] }> {
  const byLabel = (kind: string, labels: object) => `${selected(kind, ns)}?labelSelector=${selector(labels)}`;
  const operatorPods = byLabel("pods", OPERATOR_POD_LABELS);
  const agentPods = byLabel("pods", AGENT_POD_LABELS);
  const deployments = byLabel("deployments", OPERATOR_POD_LABELS);
  await listInto(c, "operator/deployments.json", "the operator's Deployments", deployments);
  const operator = await listInto<BundlePod>(c, "operator/pods.json", "the operator's pods", operatorPods);
  const daemonSets = byLabel("daemonsets", AGENT_POD_LABELS);
  await listInto(c, "agents/daemonsets.json", "the agents' DaemonSets", daemonSets);
  const agents = (await listInto<BundlePod>(c, "agents/pods.json", "the agents' pods", agentPods)) ?? [];
  return { operator: operator ?? [], agents, topolvm: await topolvmPods(c, ns, agents) };
}

/** Lists `path` into `file` (a kubectl-style List whose items carry kind and apiVersion); the items, or undefined. */
async function listInto<T = Record<string, unknown>>(
  c: BundleCollector,
  file: string,
  what: string,
  path: string,
  absentIsNormal = false,
): Promise<T[] | undefined> {
  const list = await c.read<List<T>>(what, path, { absentIsNormal });
  if (!list) return undefined;
  const kind = list.kind?.replace(/List$/, "");
  const items = (list.items ?? []).map((i) => ({ apiVersion: list.apiVersion, kind, ...i }) as T);
  c.addJson(file, { apiVersion: "v1", kind: "List", items }, { what, path, count: items.length });
  return items;
}

/** Our CRDs' and TopoLVM's: name, group, scope, each version served/storage, the stored versions. */
async function collectCrds(c: BundleCollector): Promise<void> {
  const found: object[] = [];
  for (const name of BUNDLE_CRDS) {
    const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;
    const crd = await c.read<CrdShape>(`CRD ${name}`, path, { absentIsNormal: true });
    if (!crd) continue;
    found.push({
      name,
      group: crd.spec?.group,
      scope: crd.spec?.scope,
      versions: (crd.spec?.versions ?? []).map((v) => ({
        name: v.name,
        served: v.served,
        storage: v.storage,
      })),
      storedVersions: crd.status?.storedVersions,
      conditions: crd.status?.conditions,
    });
  }
  const path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
  if (found.length)
    c.addJson("cluster/crds.json", found, { what: "CRD versions", path, count: found.length });
}

interface CrdShape {
  readonly spec?: {
    group?: string;
    scope?: string;
    versions?: Array<{ name: string; served: boolean; storage: boolean }>;
  };
  readonly status?: { storedVersions?: string[]; conditions?: unknown[] };
}

/**
 * TopoLVM's pods by its chart's label; when none carry it (another chart, a renamed release),
 * the pods named topolvm-* in the agents' namespaces, where LvmSystem installs TopoLVM.
 */
async function topolvmPods(
  c: BundleCollector,
  ns: string | undefined,
  agents: BundlePod[],
): Promise<BundlePod[]> {
  const what = "TopoLVM's pods";
  const path = `${selected("pods", ns)}?labelSelector=${selector(TOPOLVM_POD_LABELS)}`;
  const labelled = await c.read<List<BundlePod>>(what, path);
  let pods = labelled?.items ?? [];
  const from = [path];
  if (labelled && pods.length === 0)
    for (const agentNs of new Set(agents.map((p) => p.metadata.namespace ?? ""))) {
      const inNamespace = `/api/v1/namespaces/${encodeURIComponent(agentNs)}/pods`;
      from.push(inNamespace);
      const all = await c.read<List<BundlePod>>(`pods in ${agentNs} (for TopoLVM's)`, inNamespace);
      pods = [...pods, ...(all?.items ?? []).filter((p) => p.metadata.name.startsWith("topolvm-"))];
    }
  const items = pods.map((p) => ({ apiVersion: "v1", kind: "Pod", ...p }));
  if (labelled)
    c.addJson(
      "topolvm/pods.json",
      { apiVersion: "v1", kind: "List", items },
      { what, path: from.join(" "), count: pods.length },
    );
  return pods;
}

interface EventShape {
  readonly metadata: { uid?: string; name: string; namespace?: string };
  readonly involvedObject?: { apiVersion?: string; kind?: string };
  readonly lastTimestamp?: string;
  readonly eventTime?: string;
}

/** Events about LVMNodeSets and LVMNodes, and every event in the operator's namespaces, oldest first. */
async function collectEvents(
  c: BundleCollector,
  ns: string | undefined,
  anyLvmObjects: boolean,
  operatorNamespaces: ReadonlySet<string>,
): Promise<void> {
  const events = new Map<string, EventShape>();
  const paths: string[] = [];
  const add = async (what: string, path: string, keep: (e: EventShape) => boolean) => {
    paths.push(path);
    const list = await c.read<List<EventShape>>(what, path);
    for (const e of (list?.items ?? []).filter(keep))
      events.set(e.metadata.uid ?? `${e.metadata.namespace}/${e.metadata.name}`, e);
    return list !== undefined;
  };
  let read = 0;
  for (const kind of ["LVMNodeSet", "LVMNode"]) {
    const path = `${selected("events", ns)}?fieldSelector=${encodeURIComponent(`involvedObject.kind=${kind}`)}`;
    if (
      await add(
        `Events about ${kind}s`,
        path,
        (e) => e.involvedObject?.apiVersion?.startsWith("lvm.topolvm.io/") ?? false,
      )
    )
      read++;
  }
  for (const opNs of operatorNamespaces)
    if (await add(`Events in ${opNs}`, `/api/v1/namespaces/${encodeURIComponent(opNs)}/events`, () => true))
      read++;
  if (read === 0 && !anyLvmObjects) return;
  const when = (e: EventShape) => e.lastTimestamp ?? e.eventTime ?? "";
  const items = [...events.values()].sort((a, b) => when(a).localeCompare(when(b)));
  c.addJson(
    "events.json",
    { apiVersion: "v1", kind: "List", items },
    { what: "Events", path: paths.join(" "), count: items.length },
  );
}

/** Each container's log (and the previous one's, after a restart), its last lines and bytes only. */
async function collectLogs(c: BundleCollector, pod: BundlePod, o: BundleSourceOptions): Promise<void> {
  const podNs = pod.metadata.namespace ?? "";
  const restarts = new Map((pod.status?.containerStatuses ?? []).map((s) => [s.name, s.restartCount ?? 0]));
  for (const container of pod.spec?.containers ?? []) {
    for (const previous of restarts.get(container.name) ? [false, true] : [false]) {
      const query = new URLSearchParams({
        container: container.name,
        tailLines: String(o.tailLines),
        limitBytes: String(o.limitBytes),
        timestamps: "true",
        ...(previous ? { previous: "true" } : {}),
      });
      const path = `/api/v1/namespaces/${encodeURIComponent(podNs)}/pods/${encodeURIComponent(pod.metadata.name)}/log?${query}`;
      const file = `logs/${fileSegment(podNs)}/${fileSegment(pod.metadata.name)}/${fileSegment(container.name)}${previous ? ".previous" : ""}.log`;
      const what = `${previous ? "previous " : ""}log of ${podNs}/${pod.metadata.name} (${container.name})`;
      await c.addText(file, what, path);
    }
  }
}

/** The collection of `plural` (core or apps) in one namespace or all. */
function selected(plural: string, ns: string | undefined): string {
  const base = plural === "deployments" || plural === "daemonsets" ? "/apis/apps/v1" : "/api/v1";
  return `${base}${ns ? `/namespaces/${encodeURIComponent(ns)}` : ""}/${plural}`;
}

const selector = (labels: object) =>
  encodeURIComponent(
    Object.entries(labels)
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(","),
  );
