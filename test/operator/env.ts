/**
 * What the operator's integration tests share: a real control plane with the CRDs from
 * deploy/crds, the operator identity's RBAC (the exact rules docs/operator.md lists), and an
 * in-process operator whose API writes are counted.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import YAML from "yaml";
import { systemClock } from "../../src/kube/clock";
import { createKubeClient, type RequestRecord } from "../../src/kube/client";
import { agentClient } from "../../src/agent-client/agent-client";
import { OperatorMetrics } from "../../src/operator/metrics";
import { Operator, type OperatorAgentOptions } from "../../src/operator/operator";
import { ControlPlane, Json, repoRoot } from "../env/cluster";
import { operatorRules } from "../../src/components/operator-rbac";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a truthy value; fails with `what` after `ms`. */
export async function eventually<T>(
  what: string,
  fn: () => Promise<T>,
  ms = 15_000,
  every = 50,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(every);
  }
}

export async function must(cp: ControlPlane, method: string, urlPath: string, body?: unknown): Promise<Json> {
  const r = await cp.request(method, urlPath, body);
  if (r.status >= 300) throw new Error(`${method} ${urlPath}: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

/**
 * The operator's RBAC, from the rules LvmSystem grants it (src/components/operator-workload.ts): here
 * as a ClusterRole, because these tests also run node sets in other namespaces.
 */
export const OPERATOR_CLUSTER_ROLE = {
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRole",
  metadata: { name: "pulumi-lvm-operator" },
  rules: [
    ...operatorRules().nodeSets,
    ...operatorRules().clusterWide,
    ...operatorRules().leaderElection,
    ...operatorRules().events,
  ],
};

/** The agents' namespace and the operator's Role there: find the agent pods. */
export const AGENT_NAMESPACE = "lvm-system";
export const OPERATOR_AGENT_ROLE = {
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "Role",
  metadata: { name: "pulumi-lvm-operator", namespace: AGENT_NAMESPACE },
  rules: operatorRules().agentPods,
};

/** Applies deploy/crds, waits until they are Established, grants the operator its ClusterRole. */
export async function prepareCluster(cp: ControlPlane): Promise<void> {
  const dir = path.join(repoRoot, "deploy", "crds");
  const files = fs.readdirSync(dir).filter((f) => f.endsWith(".yaml"));
  if (files.length !== 2) throw new Error(`expected 2 CRDs in ${dir}, found ${files.join(", ")}`);
  const names: string[] = [];
  for (const f of files) {
    const crd = YAML.parse(fs.readFileSync(path.join(dir, f), "utf8"));
    await must(cp, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    names.push(crd.metadata.name);
  }
  for (const name of names)
    await eventually(`CRD ${name} Established`, async () => {
      const r = await cp.request("GET", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
      return r.body?.status?.conditions?.some((c: Json) => c.type === "Established" && c.status === "True");
    });
  // A new CRD's watch cache answers 429 "storage is (re)initializing" for a moment: wait it out,
  // so that latencies measured later are the operator's, not the API server's start-up.
  for (const plural of ["lvmnodesets", "lvmnodes"])
    await eventually(`${plural} watchable`, async () => {
      const r = await cp.request("GET", `/apis/lvm.topolvm.io/v2alpha1/${plural}?watch=1&timeoutSeconds=1`);
      return r.status === 200;
    });
  await must(cp, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", OPERATOR_CLUSTER_ROLE);
  const [, , ns, sa] = cp.identities.operator.username.split(":");
  await must(cp, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: "pulumi-lvm-operator" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "pulumi-lvm-operator" },
    subjects: [{ kind: "ServiceAccount", namespace: ns, name: sa }],
  });
  await must(cp, "POST", "/api/v1/namespaces", { metadata: { name: AGENT_NAMESPACE } });
  const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${AGENT_NAMESPACE}`;
  await must(cp, "POST", `${rbac}/roles`, OPERATOR_AGENT_ROLE);
  await must(cp, "POST", `${rbac}/rolebindings`, {
    metadata: { name: "pulumi-lvm-operator" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "pulumi-lvm-operator" },
    subjects: [{ kind: "ServiceAccount", namespace: ns, name: sa }],
  });
}

/** How an operator in this process reaches agents that serve plain HTTP (in this process), with `token`. */
export function plainHttpAgents(token: () => Promise<string>): OperatorAgentOptions {
  return { namespace: AGENT_NAMESPACE, client: agentClient(), token, tls: "plain-http" };
}

export interface TestOperator {
  readonly operator: Operator;
  readonly metrics: OperatorMetrics;
  /** Every request the operator made, in order. */
  readonly requests: RequestRecord[];
  readonly logs: Array<Record<string, unknown>>;
  /** Requests that change something (create, patch, delete). */
  writes(): RequestRecord[];
  stop(): Promise<void>;
}

/** An operator in this process, as the "operator" identity, against `server` (the API server or a proxy). */
export function startTestOperator(
  cp: ControlPlane,
  server = cp.url,
  options: {
    watchTimeoutSeconds?: number;
    agents?: OperatorAgentOptions;
    resyncMs?: number;
    /** @default 0: a deselected node's LVMNode goes at once (the flapping test sets a grace) */
    deselectionGraceMs?: number;
    /** The operator's own watch and retry backoff (0.5 s to 30 s, 1 s to 5 min), not the tests' quick one. */
    defaultBackoff?: boolean;
    /** Record Kubernetes Events, as the subcommand does. @default false */
    events?: boolean;
  } = {},
): TestOperator {
  const requests: RequestRecord[] = [];
  const logs: Array<Record<string, unknown>> = [];
  const metrics = new OperatorMetrics();
  const kube = createKubeClient({
    connection: { server, token: () => cp.tokens.operator, ca: () => cp.caPem },
    ...(options.watchTimeoutSeconds ? { watchTimeoutSeconds: options.watchTimeoutSeconds } : {}),
    onRequest: (r) => {
      requests.push(r);
      metrics.recordRequest(r);
    },
  });
  const operator = new Operator({
    kube,
    clock: systemClock,
    metrics,
    log: (e) => logs.push(e),
    workers: 2,
    ...(options.defaultBackoff ? {} : { retryBackoff: { baseMs: 200, capMs: 2000 } }),
    ...(options.agents ? { agents: options.agents } : {}),
    ...(options.resyncMs ? { resyncMs: options.resyncMs } : {}),
    deselectionGraceMs: options.deselectionGraceMs ?? 0,
    ...(options.events ? { events: { instance: "test-operator" } } : {}),
    ...(options.defaultBackoff ? {} : { watchBackoff: { baseMs: 100, capMs: 1000 } }),
  });
  const stopping = new AbortController();
  const running = operator.run(stopping.signal);
  return {
    operator,
    metrics,
    requests,
    logs,
    writes: () => requests.filter((r) => r.verb === "CREATE" || r.verb === "PATCH" || r.verb === "DELETE"),
    stop: async () => {
      stopping.abort();
      await running;
    },
  };
}

/**
 * An LVMNodeSet manifest of one volume group on `devices` (no device classes), selecting nodes whose
 * label `role` is one of `roles`.
 */
export function volumeGroupNodeSet(
  namespace: string,
  name: string,
  {
    devices = ["/dev/vdb"],
    roles = ["storage"],
    vgName = "vg1",
  }: { devices?: string[]; roles?: string[]; vgName?: string } = {},
): Json {
  return {
    apiVersion: "lvm.topolvm.io/v2alpha1",
    kind: "LVMNodeSet",
    metadata: { name, namespace },
    spec: {
      nodeSelector: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: "role", operator: "In", values: roles }] }],
      },
      template: {
        volumeGroups: [
          {
            name: vgName,
            deviceSelector: {
              deviceSelectorTerms: [{ matchExpressions: [{ key: "path", operator: "In", values: devices }] }],
            },
          },
        ],
      },
    },
  };
}

/**
 * An LVMNodeSet manifest selecting nodes whose label `role` is one of `roles`: one volume group on
 * /dev/vdb and one thin default device class.
 */
export function nodeSet(namespace: string, name: string, roles: string[], vgName = "vg1"): Json {
  const set = volumeGroupNodeSet(namespace, name, { roles, vgName });
  set.spec.template.deviceClasses = [
    {
      name: "thin",
      strategy: "Thin",
      volumeGroup: vgName,
      default: true,
      thin: { poolName: "pool", sizePercent: 90, overprovisionRatio: 10 },
    },
  ];
  return set;
}

export const setsPath = (ns: string, name = "") =>
  `/apis/lvm.topolvm.io/v2alpha1/namespaces/${ns}/lvmnodesets${name ? `/${name}` : ""}`;
export const lvmNodesPath = (ns: string, name = "") =>
  `/apis/lvm.topolvm.io/v2alpha1/namespaces/${ns}/lvmnodes${name ? `/${name}` : ""}`;

/** The LVMNodes of a namespace, by name. */
export async function lvmNodes(cp: ControlPlane, ns: string): Promise<Map<string, Json>> {
  const list = await must(cp, "GET", lvmNodesPath(ns));
  return new Map((list.items as Json[]).map((o) => [o.metadata.name as string, o]));
}

/** JSON with sorted keys, to compare objects whatever order the API server kept. */
export function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x) =>
    x && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1)))
      : x,
  );
}

/** Waits until no write happened for `quietMs` (the operator has settled). */
export async function settled(op: TestOperator, quietMs = 800): Promise<void> {
  let last = op.writes().length;
  let since = Date.now();
  await eventually(
    "the operator settles",
    async () => {
      const now = op.writes().length;
      if (now !== last) {
        last = now;
        since = Date.now();
      }
      // Both queues at rest: nothing waiting, nothing being reconciled, nothing due soon (a set's
      // status is coalesced for a second before it is written). Quiet time alone is not enough on a
      // loaded machine: an LVMNode reconcile can take longer than quietMs before it writes.
      const soon = Math.max(quietMs, 2000);
      return (
        Date.now() - since >= quietMs &&
        !op.operator.queue.busyWithin(soon) &&
        !(op.operator.nodeQueue?.busyWithin(soon) ?? false)
      );
    },
    20_000,
  );
}
