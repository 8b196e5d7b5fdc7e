import type { LVMNodeSpec, LVMNodeStatus } from "../../api";
import { AgentCallError, type AgentClient, type AgentEndpoint } from "../../agent-client/agent-client";
import { AGENT_POD_LABELS } from "../../agent-api/pods";
import { agentPodOf, podSchema, type Pod } from "../../agent-client/agent-pods";
import type { CallTarget } from "../../agent-api/target";
import type { Clock } from "../../kube/clock";
import { decide, describeBlocked, type Stopped, type SyncOutcome, type TeardownOutcome } from "./outcome";
import { waitingPlan } from "./pending";
import type { AgentTokenSource } from "./token-file";

/**
 * The seam between the LVMNode reconciler and the node agents (docs/operator.md). `stop` is the
 * operator's stop: it aborts plan and status calls and keeps an apply or teardown from starting;
 * one already sent runs to its answer (outcome "stopped" otherwise).
 */
export interface NodeAgentDriver {
  /**
   * Plan `spec` on the node through its agent, apply the plan when it has steps and nothing is
   * blocked, read the status. `node`: the node, or the node with the namespace of its LVMNode (sent
   * to the agent, which refuses a call for another node or namespace). A plan that needs an
   * approval under the spec's approvalPolicy (pending.ts) is applied only when `approval.approved`
   * is its hash; otherwise the outcome is "awaiting" and nothing is applied.
   */
  sync(
    node: string | CallTarget,
    spec: LVMNodeSpec,
    stop?: AbortSignal,
    beforeChange?: BeforeChange,
    approval?: ApprovalInput,
  ): Promise<SyncOutcome>;
  /** Tear down `spec`'s volume groups on the node, never forced. */
  teardown(
    node: string | CallTarget,
    spec: LVMNodeSpec,
    stop?: AbortSignal,
    beforeChange?: BeforeChange,
  ): Promise<TeardownOutcome>;
}

/**
 * Called just before an apply or teardown is sent (it may take hours): the caller frees its worker
 * and checks that what it read is still current. A reason: nothing is sent (outcome busy, retried).
 */
export type BeforeChange = (change?: {
  readonly call: "apply" | "teardown";
  /** The agent pod it goes to. */
  readonly pod: string;
  /** The plan's steps (apply). */
  readonly steps?: number;
}) => Promise<string | undefined>;

/** The LVMNode's approval (its annotation) and the devices its groups held before (its status). */
export interface ApprovalInput {
  readonly approved?: string;
  readonly claimedBefore?: ReadonlySet<string>;
}

export type AgentCall = "plan" | "apply" | "status" | "teardown";
/** ok; conflict (409); error (another answer); unreachable (no answer); aborted (the operator is stopping). */
export type AgentCallResult = "ok" | "conflict" | "error" | "unreachable" | "aborted";

export interface AgentDriverOptions {
  /** The agents' /v1 client (src/agent-client/agent-client.ts). */
  readonly client: AgentClient;
  /** The pods of the agents' namespace (the pod informer's cache), read with zod here. */
  readonly pods: () => readonly unknown[];
  /** The agents' namespace. @example "lvm-system" */
  readonly namespace: string;
  /** The operator's token for one node's agent (audience pulumi-lvm-agent/<node>). */
  readonly token: AgentTokenSource;
  /** How the agents are verified: HTTPS against their CA, or plain HTTP (an explicit opt-out). */
  readonly tls: AgentTls;
  readonly clock: Clock;
  /** Told about every call: for metrics. */
  readonly onCall?: (call: AgentCall, result: AgentCallResult, seconds: number) => void;
}

/**
 * HTTPS: the agents' CA (PEM, read on every call so a rotated CA is picked up) is the only trust
 * anchor, never the system roots, and every agent's certificate must name `serverName`
 * (src/agent-api/auth.ts AGENT_SERVER_NAME). "plain-http": no TLS (`--agent-allow-plain-http`).
 */
export type AgentTls = { readonly ca: () => Promise<string>; readonly serverName: string } | "plain-http";

type Target = { ok: true; pod: string; endpoint: AgentEndpoint } | { ok: false; message: string };

/**
 * Drives each node's agent directly at its pod IP (the operator runs in the cluster; no API server
 * proxy): the pod is the Running and Ready agent pod whose spec.nodeName is the node, so a node's
 * spec only ever goes to that node's agent, and an agent answering for another node is refused.
 */
export class AgentDriver implements NodeAgentDriver {
  constructor(private readonly o: AgentDriverOptions) {}

  async sync(
    to: string | CallTarget,
    spec: LVMNodeSpec,
    stop?: AbortSignal,
    beforeChange?: BeforeChange,
    approval: ApprovalInput = {},
  ): Promise<SyncOutcome> {
    const { approved, claimedBefore } = approval;
    const node = typeof to === "string" ? to : to.node;
    const target = await this.target(typeof to === "string" ? { node } : to);
    if (!target.ok) return { kind: "unavailable", message: target.message };
    const { pod, endpoint } = target;
    if (stop?.aborted) return stopped(`node ${node}: not planned`);
    let call: AgentCall = "plan";
    try {
      const plan = await this.timed(call, () => this.o.client.plan(endpoint, spec, { signal: stop }));
      if (plan.node !== node)
        return {
          kind: "failed",
          message: `node ${node}: agent pod ${pod} answers for node ${plan.node}; nothing was applied`,
        };
      const decision = decide(plan);
      const waiting = decision === "apply" ? waitingPlan(plan, spec, claimedBefore) : undefined;
      if (waiting && waiting.hash !== approved) {
        call = "status";
        const status = await this.status(endpoint, stop);
        return { kind: "awaiting", pod, waiting, status, ...(approved ? { stale: approved } : {}) };
      }
      let applied = 0;
      if (decision === "apply") {
        if (stop?.aborted)
          return stopped(
            `node ${node}: ${plan.actions.length} planned step(s) not applied (agent pod ${pod})`,
          );
        call = "apply";
        // Never aborted: the agent would finish it anyway, and its answer is what the status reports.
        // It may take hours (or hang on a node that lost power): the worker goes on with other nodes.
        const notNow = await beforeChange?.({ call: "apply", pod, steps: plan.actions.length });
        if (notNow)
          return {
            kind: "busy",
            message: `node ${node}: ${plan.actions.length} planned step(s) not applied (agent pod ${pod}): ${notNow}`,
          };
        const result = await this.timed(call, () => this.o.client.apply(endpoint, spec, plan.hash));
        applied = result.steps.filter((s) => s.outcome === "done").length;
      }
      call = "status";
      // After an apply, its status is read to the end so that what it did reaches the LVMNode.
      const status = await this.status(endpoint, decision === "apply" ? undefined : stop);
      return decision === "blocked"
        ? { kind: "blocked", pod, blocked: describeBlocked(plan.blocked), status }
        : { kind: "synced", pod, applied, status, ...(waiting ? { approved: waiting.hash } : {}) };
    } catch (e) {
      if (e instanceof AgentCallError && e.code === "Aborted") return stopped(`${e.message} (pod ${pod})`);
      if (!(e instanceof AgentCallError) || e.status === 0 || e.status === 409) return failure(e, pod, call);
      // The agent reports a failed apply in its status: keep that too when it can be read.
      const status = call === "apply" ? await this.status(endpoint).catch(() => undefined) : undefined;
      return { kind: "failed", message: describe(e, pod, call), ...(status ? { status } : {}) };
    }
  }

  async teardown(
    to: string | CallTarget,
    spec: LVMNodeSpec,
    stop?: AbortSignal,
    beforeChange?: BeforeChange,
  ): Promise<TeardownOutcome> {
    const node = typeof to === "string" ? to : to.node;
    const target = await this.target(typeof to === "string" ? { node } : to);
    if (!target.ok) return { kind: "unavailable", message: target.message };
    if (stop?.aborted) return stopped(`node ${node}: teardown not started (agent pod ${target.pod})`);
    try {
      const notNow = await beforeChange?.({ call: "teardown", pod: target.pod });
      if (notNow)
        return {
          kind: "busy",
          message: `node ${node}: teardown not started (agent pod ${target.pod}): ${notNow}`,
        };
      const result = await this.timed("teardown", () => this.o.client.teardown(target.endpoint, spec));
      if (result.node !== node)
        return {
          kind: "failed",
          message: `node ${node}: agent pod ${target.pod} answered for node ${result.node}`,
        };
      return { kind: "tornDown", pod: target.pod };
    } catch (e) {
      if (e instanceof AgentCallError && e.status === 409 && e.code === "VolumeGroupInUse") {
        const volumes = ((e.details.volumes ?? []) as Array<{ volumeGroup: string; name: string }>).map(
          (v) => `${v.volumeGroup}/${v.name}`,
        );
        return {
          kind: "refused",
          volumes,
          message: `node ${node}: teardown refused by agent pod ${target.pod} (HTTP 409 VolumeGroupInUse): logical volumes ${volumes.join(", ")} remain; remove them (the operator never forces a teardown)`,
        };
      }
      return failure(e, target.pod, "teardown");
    }
  }

  private async status(endpoint: AgentEndpoint, stop?: AbortSignal): Promise<LVMNodeStatus> {
    return (await this.timed("status", () => this.o.client.status(endpoint, { signal: stop }))).status;
  }

  /** The node's agent pod and how to call it, or why it cannot be called now. */
  private async target({ node, namespace }: CallTarget): Promise<Target> {
    const ns = this.o.namespace;
    // Only the node's own pods are parsed: parsing every pod of the namespace for each call made a
    // fleet's reconcile O(N²) (500 nodes: 250,000 zod parses per pass over the LVMNodes).
    const pods = this.o.pods().flatMap((p) => {
      if (nodeNameOf(p) !== node) return [];
      const parsed = podSchema.safeParse(p);
      return parsed.success && isAgentPod(parsed.data) ? [parsed.data] : [];
    });
    const found = agentPodOf(node, ns, pods);
    if (!found.ok) return found;
    const ip = pods.find((p) => p.metadata.name === found.pod.name)?.status?.podIP ?? "";
    const host = ip.includes(":") ? `[${ip}]` : ip;
    const pod = `${ns}/${found.pod.name}`;
    try {
      const tls = this.o.tls;
      const [token, ca] = await Promise.all([
        this.o.token(node),
        tls === "plain-http" ? undefined : tls.ca(),
      ]);
      return {
        ok: true,
        pod,
        endpoint: {
          node,
          ...(namespace ? { namespace } : {}),
          // The operator's setting decides, never the pod: HTTPS unless plain HTTP was allowed.
          url: `${tls === "plain-http" ? "http" : "https"}://${host}:${found.pod.port}/`,
          token,
          ...(tls === "plain-http" ? {} : { ca, serverName: tls.serverName }),
        },
      };
    } catch (e) {
      return { ok: false, message: `node ${node}: cannot call agent pod ${pod}: ${(e as Error).message}` };
    }
  }

  private async timed<T>(call: AgentCall, fn: () => Promise<T>): Promise<T> {
    const t0 = this.o.clock.now();
    let result: AgentCallResult = "ok";
    try {
      return await fn();
    } catch (e) {
      result = callResult(e);
      throw e;
    } finally {
      this.o.onCall?.(call, result, (this.o.clock.now() - t0) / 1000);
    }
  }
}

function callResult(e: unknown): AgentCallResult {
  if (!(e instanceof AgentCallError)) return "error";
  if (e.code === "Aborted") return "aborted";
  if (e.status === 0) return "unreachable";
  return e.status === 409 ? "conflict" : "error";
}

function stopped(what: string): Stopped {
  return { kind: "stopped", message: `${what}: the operator is stopping` };
}

function isAgentPod(pod: Pod): boolean {
  const labels = (pod.metadata as { labels?: Record<string, string> }).labels ?? {};
  return Object.entries(AGENT_POD_LABELS).every(([k, v]) => labels[k] === v);
}

/** No answer: unavailable; 409 PlanChanged / OperationInProgress: busy; anything else: failed. */
function failure(
  e: unknown,
  pod: string,
  call: AgentCall,
): { readonly kind: "busy" | "unavailable" | "failed"; readonly message: string } {
  if (!(e instanceof AgentCallError))
    return { kind: "failed", message: `${call} through agent pod ${pod}: ${(e as Error).message}` };
  if (e.status === 0) return { kind: "unavailable", message: `${e.message} (pod ${pod})` };
  if (e.status === 409 && (e.code === "PlanChanged" || e.code === "OperationInProgress"))
    return { kind: "busy", message: describe(e, pod, call) };
  return { kind: "failed", message: describe(e, pod, call) };
}

/** "POST /v1/apply to agent pod lvm-system/agent-x answered HTTP 500: node n1: CommandFailed: ..." */
function describe(e: AgentCallError, pod: string, call: AgentCall): string {
  const route = call === "status" ? "GET /v1/status" : `POST /v1/${call}`;
  return `${route} to agent pod ${pod} answered HTTP ${e.status}: ${e.message}`;
}

/** `spec.nodeName` of an object not parsed yet (a pod from the cache), or undefined. */
function nodeNameOf(o: unknown): unknown {
  const spec = (o as { spec?: unknown } | null)?.spec;
  return typeof spec === "object" && spec !== null ? (spec as { nodeName?: unknown }).nodeName : undefined;
}
