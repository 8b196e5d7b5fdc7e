/**
 * The node agent installed into the cluster tier as LvmSystem installs it: the DaemonSet, service
 * accounts and RBAC rendered by LvmSystem's own pure functions (planSystem → agentManifests,
 * provisionerManifests; src/components/system-manifests.ts), the CRDs from deploy/crds, and the image
 * `npm run image` builds (deploy/image, imported into the node's containerd). The only test changes:
 * `imagePullPolicy: Never` (there is no registry) and no operator (the test drives the agent).
 *
 * The test reaches the agent pod the way a NodePort Service would: the guest forwards its port to
 * the pod's (agentPortOnNode below, kube-proxy's job; this cluster runs no kube-proxy), and calls
 * it with a token of LvmSystem's provisioner service account, bound to the agent's audience — the
 * agent checks it with a TokenReview and a SubjectAccessReview against the apiserver, as in production.
 */
import type { AgentEndpoint } from "../../src/agent-client/agent-client";
import { AGENT_SERVER_NAME, nodeAudience } from "../../src/agent-api/auth";
import { issueAgentCertificates, type AgentCertificates } from "../../src/components/agent-certificates";
import { agentTlsSecretName } from "../../src/components/agent-tls";
import { loadCrdManifests, defaultCrdDirectory } from "../../src/components/crds";
import { agentManifests } from "../../src/components/agent-workload";
import {
  DEFAULT_AGENT_PORT,
  planSystem,
  type LvmSystemArgs,
  type SystemPlan,
} from "../../src/components/lvm-system";
import { namespaceManifest } from "../../src/components/system-plan";
import { provisionerManifests } from "../../src/components/system-rbac";
import type { TopolvmSettings } from "../../src/components/topolvm-args";
import { DEFAULT_IMAGE } from "../../src/version";
import type { ControlPlane, Json } from "../env/cluster";
import type { Guest } from "../vm/guest";
import { GUEST_IP } from "./node-config";
import { apply, get, waitFor } from "./objects";

export interface AgentInstall {
  readonly plan: SystemPlan;
  /** Every object applied, in order. */
  readonly objects: readonly Json[];
  /** The agents' CA and serving certificate, in the Secret LvmSystem would have generated. */
  readonly certificates: AgentCertificates;
}

/**
 * LvmSystem's objects for the agent (no operator, no TopoLVM: topolvm.ts installs that). With
 * `certificates`, the agents' TLS Secret as LvmSystem generates it (generatedAgentTlsSecret: the
 * same issuer, kubernetes.io/tls plus ca.crt), before the DaemonSet that mounts it.
 */
export function agentObjects(
  name: string,
  args: LvmSystemArgs,
  certificates?: AgentCertificates,
): { plan: SystemPlan; objects: Json[] } {
  const plan = planSystem(name, { ...args, operator: { enabled: false } });
  const tlsSecret = agentTlsSecretName(plan.agent, args);
  const ns = plan.namespace;
  const agent = agentManifests(plan, args);
  const provisioner = provisionerManifests(plan);
  return {
    plan,
    objects: [
      namespaceManifest(plan),
      ...loadCrdManifests(defaultCrdDirectory()),
      agent.serviceAccount,
      agent.authDelegator,
      provisioner.serviceAccount,
      provisioner.role,
      provisioner.binding,
      ...(tlsSecret && certificates
        ? [
            {
              apiVersion: "v1",
              kind: "Secret",
              metadata: {
                name: tlsSecret,
                namespace: ns,
                labels: { "app.kubernetes.io/name": "pulumi-lvm-agent" },
              },
              type: "kubernetes.io/tls",
              stringData: {
                "tls.crt": certificates.cert,
                "tls.key": certificates.key,
                "ca.crt": certificates.caCert,
              },
            },
          ]
        : []),
      agent.daemonSet,
    ],
  };
}

/** Applies the agent's objects and waits for the DaemonSet's pod on `node` to be Ready. */
export async function installAgent(
  cp: ControlPlane,
  opts: { name: string; node: string; topolvm?: TopolvmSettings; why?: () => Promise<string> },
): Promise<AgentInstall & { pod: Json }> {
  const certificates = await issueAgentCertificates();
  const { plan, objects } = agentObjects(
    opts.name,
    {
      agentImage: DEFAULT_IMAGE,
      agentImagePullPolicy: "Never",
      ...(opts.topolvm ? { topolvm: opts.topolvm } : {}),
    },
    certificates,
  );
  for (const o of objects) {
    await apply(cp, o);
    if (o.kind === "CustomResourceDefinition") {
      await waitFor(
        `CRD ${o.metadata.name} established`,
        () => get(cp, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${o.metadata.name}`),
        (c) => !!c?.status?.conditions?.some((x: Json) => x.type === "Established" && x.status === "True"),
        60_000,
      );
    }
  }
  const selector = Object.entries(plan.selectorLabels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const pods = await waitFor(
    `the agent pod of DaemonSet ${plan.namespace}/${plan.agent} on ${opts.node} Ready`,
    async () =>
      ((
        await get(
          cp,
          `/api/v1/namespaces/${plan.namespace}/pods?labelSelector=${encodeURIComponent(selector)}`,
        )
      )?.items ?? []) as Json[],
    (ps) =>
      ps.some(
        (p) =>
          p.spec?.nodeName === opts.node &&
          p.status?.conditions?.some((c: Json) => c.type === "Ready" && c.status === "True"),
      ),
    // The startup probe allows 5 min; image pull is not involved (imported before the kubelet started).
    600_000,
    async () => `${await agentPodState(cp, plan, selector)}\n${opts.why ? await opts.why() : ""}`,
  );
  const pod = pods.find((p) => p.spec.nodeName === opts.node)!;
  return { plan, objects, certificates, pod };
}

/** Each agent pod's container statuses and its current and previous logs, for failure messages. */
async function agentPodState(cp: ControlPlane, plan: SystemPlan, selector: string): Promise<string> {
  const ns = plan.namespace;
  const pods: Json[] =
    (await get(cp, `/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(selector)}`))?.items ??
    [];
  const parts: string[] = [];
  for (const p of pods) {
    parts.push(`----- pod ${ns}/${p.metadata.name}: ${JSON.stringify(p.status?.containerStatuses)}`);
    for (const previous of [true, false]) {
      const r = await cp.request(
        "GET",
        `/api/v1/namespaces/${ns}/pods/${p.metadata.name}/log?tailLines=60${previous ? "&previous=true" : ""}`,
      );
      const body = typeof r.body === "string" ? r.body : (JSON.stringify(r.body) ?? "(empty)");
      parts.push(`----- its ${previous ? "previous" : "current"} log (HTTP ${r.status}):\n${body}`);
    }
  }
  return parts.join("\n");
}

/**
 * Forwards the node's `nodePort` (which qemu forwards from the host, Guest.hostPort) to the agent
 * pod's port: a DNAT rule, as kube-proxy writes for a NodePort Service.
 */
export async function agentPortOnNode(guest: Guest, podIp: string, nodePort: number): Promise<void> {
  await guest.run([
    "iptables",
    "-t",
    "nat",
    "-A",
    "PREROUTING",
    "-d",
    `${GUEST_IP}/32`,
    "-p",
    "tcp",
    "--dport",
    String(nodePort),
    "-j",
    "DNAT",
    "--to-destination",
    `${podIp}:${DEFAULT_AGENT_PORT}`,
  ]);
}

/** A token of the provisioner service account for node `node`'s agent (TokenRequest, per-node audience). */
export async function provisionerToken(cp: ControlPlane, plan: SystemPlan, node: string): Promise<string> {
  const r = await cp.request(
    "POST",
    `/api/v1/namespaces/${plan.namespace}/serviceaccounts/${plan.provisioner}/token`,
    {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: { audiences: [nodeAudience(node)], expirationSeconds: 3600 },
    },
  );
  if (r.status !== 201 && r.status !== 200)
    throw new Error(`TokenRequest for ${plan.provisioner}: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body.status.token;
}

/**
 * The agent on `node` as the provider's client calls it, through the node port: HTTPS, trusting only
 * the agents' CA and verifying the agents' fixed name, as the operator does.
 */
export async function agentEndpoint(
  cp: ControlPlane,
  guest: Guest,
  install: AgentInstall & { pod: Json },
  node: string,
  nodePort: number,
): Promise<AgentEndpoint> {
  await agentPortOnNode(guest, install.pod.status.podIP, nodePort);
  return {
    node,
    url: `https://127.0.0.1:${guest.hostPort(nodePort)}`,
    ca: install.certificates.caCert,
    serverName: AGENT_SERVER_NAME,
    token: await provisionerToken(cp, install.plan, node),
  };
}
