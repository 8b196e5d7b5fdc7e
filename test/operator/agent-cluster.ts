/**
 * A real kube-apiserver with REAL node agents (processes on loop devices) and an in-process
 * operator driving them, as test/operator/agents.test.ts sets it up: the agents authenticate the
 * operator with TokenReview and authorize it with SubjectAccessReview against that API server; agent
 * pods are API objects (no kubelet: the test writes their status) at the port each agent listens on.
 */
import * as fs from "node:fs";
import { agentClient } from "../../src/agent-client/agent-client";
import type { Transport } from "../../src/kube/http";
import { AGENT_SERVER_NAME } from "../../src/agent-api/auth";
import { issueAgentCertificates } from "../../src/components/agent-certificates";
import { operatorTokenRules } from "../../src/components/operator-rbac";
import { tokenRequests } from "../../src/operator/agents/token-request";
import { systemClock } from "../../src/kube/clock";
import { createKubeClient } from "../../src/kube/client";
import { ControlPlane, startControlPlane } from "../env/cluster";
import { requireHostTier, Scratch, startAgent, type AgentProcess } from "../agent/harness";
import {
  AGENT_NAMESPACE,
  eventually,
  must,
  prepareCluster,
  startTestOperator,
  type TestOperator,
} from "./env";
import { createAgentPod, createAgentServiceAccount } from "./agent-pods";

export interface AgentCluster {
  readonly cp: ControlPlane;
  readonly op: TestOperator;
  readonly agents: Record<string, AgentProcess>;
  readonly scratch: Record<string, Scratch>;
  /**
   * The agents' CA and server name (they serve HTTPS unless `plainHttp`), and the serving
   * certificate and key all agents share (what a stand-in for a hostile node's agent holds too).
   */
  readonly tls?: {
    readonly ca: string;
    readonly serverName: string;
    readonly cert: string;
    readonly key: string;
  };
  /** Adds (or replaces) the agent pod of `node`, Ready, at 127.0.0.1:`port`. */
  agentPod(node: string, port: number): Promise<void>;
  /**
   * Stops `node`'s agent and starts it again on every loop device of its scratch, one added since
   * included: a device hot-plugged into the node, as the agent sees it.
   */
  restartAgent(node: string): Promise<void>;
  stop(): Promise<void>;
}

export interface AgentClusterOptions {
  /** Nodes with a real agent on `devices` loop devices each. */
  readonly nodes: readonly string[];
  /** Nodes registered without an agent (tests give them stand-ins). @default none */
  readonly bareNodes?: readonly string[];
  readonly devices?: number;
  /** Namespaces to create; the agents serve LVMNodes of the first. */
  readonly namespaces: readonly string[];
  readonly resyncMs: number;
  /** The operator's transport to the agents. @default node:http(s) */
  readonly transport?: Transport;
  readonly labels?: Record<string, string>;
  /** Agents serve plain HTTP and the operator is told it may use it. @default false: HTTPS */
  readonly plainHttp?: boolean;
  /** The operator records Events. @default false */
  readonly events?: boolean;
  /** The operator's --deselection-grace. @default 0 (startTestOperator's) */
  readonly deselectionGraceMs?: number;
}

export async function startAgentCluster(o: AgentClusterOptions): Promise<AgentCluster> {
  requireHostTier();
  const cp = await startControlPlane();
  const agents: Record<string, AgentProcess> = {};
  const scratch: Record<string, Scratch> = {};
  // The agents' certificates as LvmSystem issues them, in files as the Secret volume has them.
  const tlsDir = new Scratch("agent-tls");
  const certs = await issueAgentCertificates();
  fs.writeFileSync(tlsDir.path("tls.crt"), certs.cert);
  fs.writeFileSync(tlsDir.path("tls.key"), certs.key, { mode: 0o600 });
  const tlsArgs = o.plainHttp
    ? []
    : ["--tls-cert", tlsDir.path("tls.crt"), "--tls-key", tlsDir.path("tls.key")];
  await prepareCluster(cp);
  for (const ns of o.namespaces) await must(cp, "POST", "/api/v1/namespaces", { metadata: { name: ns } });
  await must(cp, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    metadata: { name: "agent-auth-delegator" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:auth-delegator" },
    subjects: [{ kind: "User", name: cp.identities.agent.username }],
  });
  await createAgentServiceAccount(cp);
  const agentPod = (node: string, port: number) => createAgentPod(cp, node, port, { replace: true });
  for (const node of o.bareNodes ?? []) await cp.createNode(node, o.labels ?? { role: "storage" });
  /** Starts `node`'s agent on its scratch's loop devices (all of them, as they are now) and its pod. */
  const runAgent = async (node: string) => {
    const s = scratch[node]!;
    agents[node] = await startAgent({
      node,
      devices: s.loops,
      ...s.agentFiles(),
      // Each simulated node is a machine of its own (its /dev holds only its devices): every node
      // builds the set's volume group under the same name, which one machine's lvm refuses
      // (the agent's VolumeGroupNameTaken check sees the other node's group otherwise).
      ownMachine: true,
      auth: { kubeconfig: cp.kubeconfigFor("agent") },
      extraArgs: ["--namespace", o.namespaces[0]!, ...tlsArgs],
    });
    await agentPod(node, Number(new URL(agents[node].url).port));
  };
  for (const node of o.nodes) {
    await cp.createNode(node, o.labels ?? { role: "storage" });
    const s = (scratch[node] = new Scratch(`operator-${node}`));
    for (let i = 0; i < (o.devices ?? 2); i++) s.loop();
    await runAgent(node);
  }
  const [, , saNs, sa] = cp.identities.operator.username.split(":");
  await must(cp, "POST", "/api/v1/namespaces", { metadata: { name: saNs } });
  await must(cp, "POST", `/api/v1/namespaces/${saNs}/serviceaccounts`, { metadata: { name: sa } });
  // The operator may request tokens for its own service account, and only that one (as LvmSystem grants).
  await must(cp, "POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${saNs}/roles`, {
    metadata: { name: "pulumi-lvm-operator-token" },
    rules: operatorTokenRules(sa!),
  });
  await must(cp, "POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${saNs}/rolebindings`, {
    metadata: { name: "pulumi-lvm-operator-token" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "pulumi-lvm-operator-token" },
    subjects: [{ kind: "ServiceAccount", namespace: saNs, name: sa }],
  });
  const tls = o.plainHttp
    ? undefined
    : { ca: certs.caCert, serverName: AGENT_SERVER_NAME, cert: certs.cert, key: certs.key };
  const tokenKube = createKubeClient({
    connection: { server: cp.url, token: () => cp.tokens.operator, ca: () => cp.caPem },
  });
  const op = startTestOperator(cp, cp.url, {
    agents: {
      namespace: AGENT_NAMESPACE,
      client: agentClient(o.transport),
      // Per node, a token only that node's agent accepts, as the operator requests it in a cluster.
      token: tokenRequests({
        kube: tokenKube,
        serviceAccount: { namespace: saNs!, name: sa! },
        clock: systemClock,
      }),
      tls: tls ? { ca: async () => tls.ca, serverName: tls.serverName } : "plain-http",
    },
    resyncMs: o.resyncMs,
    ...(o.events ? { events: true } : {}),
    ...(o.deselectionGraceMs !== undefined ? { deselectionGraceMs: o.deselectionGraceMs } : {}),
  });
  await eventually("caches synced", async () => op.operator.ready);
  return {
    cp,
    op,
    agents,
    scratch,
    ...(tls ? { tls } : {}),
    agentPod,
    restartAgent: async (node) => {
      await agents[node]!.stop();
      await runAgent(node);
    },
    stop: async () => {
      await op.stop();
      for (const a of Object.values(agents)) await a.stop();
      await cp.stop();
      for (const s of Object.values(scratch)) s.cleanup();
      tlsDir.cleanup();
    },
  };
}
