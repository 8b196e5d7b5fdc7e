import { nodeAudience } from "../../agent-api/auth";
import type { Clock } from "../../kube/clock";
import type { KubeClient } from "../../kube/client";
import { SERVICE_ACCOUNTS } from "../../kube/resources";
import type { AgentTokenSource } from "./token-file";

export interface TokenRequestOptions {
  readonly kube: KubeClient;
  /** The operator's own service account: the only one its RBAC lets it request tokens for. */
  readonly serviceAccount: { readonly namespace: string; readonly name: string };
  readonly clock: Clock;
  /** Lifetime asked for; the API server's minimum is 600. @default 600 */
  readonly expirationSeconds?: number;
}

/** The lifetime asked for each node's token: TokenRequest's minimum. */
export const NODE_TOKEN_SECONDS = 600;

/**
 * The operator's token for one node's agent: a TokenRequest for the operator's own service account
 * with audience `pulumi-lvm-agent/<node>` (src/agent-api/auth.ts), which only that node's agent
 * accepts. A token is reused until half its lifetime is gone (an apply that starts with it may run
 * for hours: the agent checks it once, at the start), then renewed; concurrent calls for a node
 * share one request. Entries of nodes no longer called expire and are dropped. Tokens are never
 * logged; a failed request is an error naming the service account, the audience and the API's answer.
 */
export function tokenRequests(o: TokenRequestOptions): AgentTokenSource {
  const seconds = o.expirationSeconds ?? NODE_TOKEN_SECONDS;
  const { namespace, name } = o.serviceAccount;
  const cache = new Map<string, { token: string; renewAt: number; expiresAt: number }>();
  const pending = new Map<string, Promise<string>>();

  async function request(node: string): Promise<string> {
    const audience = nodeAudience(node);
    const issued = o.clock.now();
    let answer: { status?: { token?: unknown; expirationTimestamp?: unknown } };
    try {
      answer = await o.kube.createSubresource(SERVICE_ACCOUNTS, namespace, name, "token", {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { audiences: [audience], expirationSeconds: seconds },
      });
    } catch (e) {
      throw new Error(
        `cannot get a token for node ${node}'s agent (TokenRequest for service account ${namespace}/${name}, audience ${audience}): ${(e as Error).message}`,
      );
    }
    const token = answer.status?.token;
    if (typeof token !== "string" || !token)
      throw new Error(
        `the TokenRequest for service account ${namespace}/${name} (audience ${audience}) was answered without status.token`,
      );
    const stated = Date.parse(String(answer.status?.expirationTimestamp ?? ""));
    const expiresAt = Number.isFinite(stated)
      ? Math.min(stated, issued + seconds * 1000)
      : issued + seconds * 1000;
    const now = o.clock.now();
    for (const [n, e] of cache) if (e.expiresAt <= now) cache.delete(n);
    cache.set(node, { token, renewAt: issued + (expiresAt - issued) / 2, expiresAt });
    return token;
  }

  return (node) => {
    const cached = cache.get(node);
    if (cached && o.clock.now() < cached.renewAt) return Promise.resolve(cached.token);
    let p = pending.get(node);
    if (!p) {
      p = request(node).finally(() => pending.delete(node));
      pending.set(node, p);
    }
    return p;
  };
}

/**
 * The service account a token names: `system:serviceaccount:<namespace>:<name>` in the `sub` claim
 * of a service-account JWT (the in-cluster token). Undefined for any other token; the signature is
 * not checked (the token is the operator's own, read from its own pod).
 */
export function serviceAccountOfToken(token: string): { namespace: string; name: string } | undefined {
  const payload = token.split(".")[1];
  if (!payload) return undefined;
  try {
    const sub = (JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { sub?: unknown }).sub;
    const m = typeof sub === "string" ? /^system:serviceaccount:([^:]+):([^:]+)$/.exec(sub) : null;
    return m ? { namespace: m[1]!, name: m[2]! } : undefined;
  } catch {
    return undefined;
  }
}
