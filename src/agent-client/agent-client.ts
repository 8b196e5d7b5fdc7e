import type { z } from "zod";
import type { LVMNodeSpec } from "../api";
import { requestCredentials, type KubeConnection } from "../kube/connection";
import { kubeStatusMessage } from "../kube/errors";
import { httpTransport, type Transport } from "../kube/http";
import { PROXY_AUTHORIZATION_HEADER } from "../agent-api/auth";
import {
  errorResponseSchema,
  nodePlanSchema,
  operationResultSchema,
  statusResponseSchema,
} from "../agent-api/schemas";
import { describeTarget, formatTarget, TARGET_HEADER } from "../agent-api/target";

/** One node's agent as the provider reaches it. */
export interface AgentEndpoint {
  readonly node: string;
  /**
   * The namespace of the LVMNode the call is for (the operator), sent with the node in
   * X-Pulumi-Lvm-Target; the agent refuses a call for another node or namespace. @default the node only
   */
  readonly namespace?: string;
  /**
   * Base URL: the agent's own ("http://127.0.0.1:9443"), or its pod's proxy on the API server
   * ("https://api:6443/api/v1/namespaces/lvm-system/pods/http:lvm-agent-x7k2p:8080/proxy/").
   */
  readonly url: string;
  /** Bearer token for the agent; never part of an error message. */
  readonly token: string;
  /** PEM of the CA of an https agent reached directly: the only CA trusted then. @default the system CAs */
  readonly ca?: string;
  /** The name the agent's certificate must carry, when reached at an IP address. @default the URL's host */
  readonly serverName?: string;
  /** Set when the call goes through the API server's pod proxy, with the caller's own credentials. */
  readonly proxy?: { readonly namespace: string; readonly pod: string; readonly apiServer: KubeConnection };
}

/** How long each call may take. apply/teardown run lvm (a pvmove may take hours). */
export const TIMEOUTS_MS = {
  plan: 120_000,
  status: 60_000,
  apply: 25 * 3600_000,
  teardown: 3600_000,
} as const;

/**
 * Options of a read-only call (plan, status). apply and teardown take none: once sent, an operation
 * that changes the disks is waited for, never cut off (its answer says what it did).
 */
export interface ReadCallOptions {
  /** Aborts the call: it then fails with code "Aborted". */
  readonly signal?: AbortSignal;
}

export type NodePlanResponse = z.infer<typeof nodePlanSchema>;
export type OperationResponse = z.infer<typeof operationResultSchema>;
export type StatusResponse = z.infer<typeof statusResponseSchema>;

/** An agent answered with an error, or could not be reached; the message names the node. */
export class AgentCallError extends Error {
  constructor(
    readonly node: string,
    /** HTTP status, or 0 when the agent was not reached. */
    readonly status: number,
    /** The agent's error code (PlanChanged, VolumeGroupInUse, CommandFailed, WrongNode, ...), or "Unreachable", "Aborted", "BadResponse", "WrongNode" (an answer for another node). */
    readonly code: string,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = "AgentCallError";
  }
}

/**
 * How often a read-only call (plan, status) is tried again after a transient failure, and after how
 * long: the agent or the API server not reached, or the API server's proxy answering 502/503/504 by
 * itself (e.g. "error trying to reach service: net/http: TLS handshake timeout" from an agent pod on a
 * starved node). An agent's own answer, and apply and teardown, are never repeated here.
 */
export const READ_RETRY_DELAYS_MS: readonly number[] = [1_000, 3_000];

export interface AgentClientOptions {
  /** @default READ_RETRY_DELAYS_MS */
  readonly readRetryDelaysMs?: readonly number[];
  /** @default setTimeout */
  readonly sleep?: (ms: number) => Promise<void>;
}

/**
 * The connection failures a read is tried again after (Node's error codes): not a TLS verification
 * failure, which another try would not change, and not a call that timed out, which already waited.
 */
const RETRIED_CAUSES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);

/** A failure worth one more try of a read-only call: nothing reached the agent's code. */
function transient(e: unknown): e is AgentCallError {
  if (!(e instanceof AgentCallError)) return false;
  if (e.code === "Unreachable") return RETRIED_CAUSES.has(String(e.details["cause"]));
  return e.code === "BadResponse" && [502, 503, 504].includes(e.status);
}

/** The agent's /v1 API (src/agent/routes/v1.ts), responses validated with the agent's own schemas. */
export function agentClient(transport: Transport = httpTransport, options: AgentClientOptions = {}) {
  const delays = options.readRetryDelaysMs ?? READ_RETRY_DELAYS_MS;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  async function read<T>(f: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await f();
      } catch (e) {
        const delay = delays[attempt];
        if (!transient(e)) throw e;
        if (delay === undefined || signal?.aborted) {
          if (attempt === 0) throw e;
          const waits = delays.slice(0, attempt).map((d) => `${d / 1000} s`);
          throw new AgentCallError(
            e.node,
            e.status,
            e.code,
            `${e.message} (tried ${attempt + 1} times, after waiting ${waits.join(" and ")})`,
            e.details,
          );
        }
        await sleep(delay);
      }
    }
  }
  async function call<T>(
    ep: AgentEndpoint,
    method: "GET" | "POST",
    path: string,
    timeoutMs: number,
    schema: z.ZodType<T>,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<T> {
    const url = new URL(path, ep.url.endsWith("/") ? ep.url : `${ep.url}/`);
    const what = `${method} /${path}${ep.proxy ? ` (pod ${ep.proxy.namespace}/${ep.proxy.pod}, through the API server)` : ""}`;
    // Through the pod proxy, Authorization holds the caller's credentials for the API server, which
    // removes it; the agent token rides in its own header (src/agent/auth/request-credentials.ts).
    let response: { status: number; body: string };
    try {
      const credentials = ep.proxy
        ? await requestCredentials(ep.proxy.apiServer)
        : {
            headers: {},
            ...(ep.ca || ep.serverName
              ? {
                  tls: {
                    ...(ep.ca ? { ca: ep.ca } : {}),
                    ...(ep.serverName ? { servername: ep.serverName } : {}),
                  },
                }
              : {}),
          };
      response = await transport({
        method,
        url,
        headers: {
          ...credentials.headers,
          [ep.proxy ? PROXY_AUTHORIZATION_HEADER : "authorization"]: `Bearer ${ep.token}`,
          [TARGET_HEADER]: formatTarget(ep),
          accept: "application/json",
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(credentials.tls ? { tls: credentials.tls } : {}),
        ...(signal ? { signal } : {}),
        timeoutMs,
      });
    } catch (e) {
      if (signal?.aborted)
        throw new AgentCallError(ep.node, 0, "Aborted", `node ${ep.node}: ${what} to its agent was aborted`);
      const cause = (e as { code?: unknown }).code;
      throw new AgentCallError(
        ep.node,
        0,
        "Unreachable",
        ep.proxy
          ? `node ${ep.node}: cannot reach the API server at ${url.origin} to call its agent (pod ${ep.proxy.namespace}/${ep.proxy.pod}): ${(e as Error).message}`
          : `node ${ep.node}: cannot reach its agent at ${url.origin}: ${(e as Error).message}`,
        typeof cause === "string" ? { cause } : {},
      );
    }
    const json = parseJson(response.body);
    if (response.status < 200 || response.status > 299) throw errorFrom(ep.node, response.status, json, what);
    if (json === undefined)
      throw new AgentCallError(
        ep.node,
        response.status,
        "BadResponse",
        `node ${ep.node}: ${what} answered HTTP ${response.status} with a body that is not JSON (${describeBody(response.body)}); is ${url.origin} the agent?`,
      );
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new AgentCallError(
        ep.node,
        response.status,
        "BadResponse",
        `node ${ep.node}: ${what} answered with an unexpected body: ${issue ? `${issue.path.join(".") || "(the body)"}: ${issue.message}` : "?"}`,
      );
    }
    // Every answer names the node it is about: one for another node is refused, whatever it says.
    const answered = (parsed.data as { node?: unknown }).node;
    if (answered !== ep.node)
      throw new AgentCallError(
        ep.node,
        response.status,
        "WrongNode",
        `node ${ep.node}: ${what} was answered by the agent of node ${String(answered)}, not of ${describeTarget(ep)} (${ep.proxy ? `pod ${ep.proxy.namespace}/${ep.proxy.pod}` : url.origin}); its answer is not used`,
      );
    return parsed.data;
  }
  return {
    plan: (ep: AgentEndpoint, spec: LVMNodeSpec, options: ReadCallOptions = {}) =>
      read(
        () => call(ep, "POST", "v1/plan", TIMEOUTS_MS.plan, nodePlanSchema, { spec }, options.signal),
        options.signal,
      ),
    apply: (ep: AgentEndpoint, spec: LVMNodeSpec, planHash: string) =>
      call(ep, "POST", "v1/apply", TIMEOUTS_MS.apply, operationResultSchema, { spec, planHash }),
    teardown: (ep: AgentEndpoint, spec: LVMNodeSpec) =>
      call(ep, "POST", "v1/teardown", TIMEOUTS_MS.teardown, operationResultSchema, { spec }),
    status: (ep: AgentEndpoint, options: ReadCallOptions = {}) =>
      read(
        () =>
          call(ep, "GET", "v1/status", TIMEOUTS_MS.status, statusResponseSchema, undefined, options.signal),
        options.signal,
      ),
  };
}

export type AgentClient = ReturnType<typeof agentClient>;

/**
 * An AgentCallError for an error response: the agent's code and message, prefixed with the node,
 * and the details a person needs (field problems, the volumes in the way, the failed command).
 */
export function errorFrom(node: string, status: number, json: unknown, what: string): AgentCallError {
  const parsed = errorResponseSchema.safeParse(json);
  if (!parsed.success) {
    // Not the agent's answer: the API server's own (a Status), e.g. 403 for pods/proxy, or a proxy in between.
    const apiMessage = kubeStatusMessage(json);
    return new AgentCallError(
      node,
      status,
      "BadResponse",
      `node ${node}: ${what} failed with HTTP ${status}${apiMessage ? `: ${apiMessage}` : ""}`,
    );
  }
  const { code, message, ...details } = parsed.data.error;
  const lines = [`node ${node}: ${code}: ${message}`];
  for (const p of parsed.data.error.problems ?? []) lines.push(`  ${p.path}: ${p.message}`);
  for (const v of parsed.data.error.volumes ?? [])
    lines.push(`  logical volume ${v.volumeGroup}/${v.name} (${v.attributes}, ${v.size} bytes)`);
  const command = (details as { command?: { argv?: string[]; exitCode?: number | null; stderr?: string } })
    .command;
  // The agent's message usually quotes the stderr already (src/agent/lvm-runner.ts); say it once.
  if (command?.argv)
    lines.push(
      `  command: ${command.argv.join(" ")} (exit code ${command.exitCode ?? "none"})`,
      ...(message.includes((command.stderr ?? "").trim()) ? [] : indent(command.stderr)),
    );
  return new AgentCallError(node, status, code, lines.join("\n"), details);
}

function indent(text: string | undefined): string[] {
  return (text ?? "")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => `    ${l}`);
}

/** The start of a body that is not JSON, for an error message. */
function describeBody(body: string): string {
  if (!body.trim()) return "empty";
  const start = body.trim().slice(0, 80).replace(/\s+/g, " ");
  return `starts ${JSON.stringify(start)}${body.trim().length > 80 ? "..." : ""}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
