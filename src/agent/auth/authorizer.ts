import { createHash } from "node:crypto";
import { nodeAudience } from "../../agent-api/auth";
import { API_GROUP } from "../../api";
import type { KubeAuthClient, ResourceAttributes, ReviewedUser } from "./kube-auth";
import { TtlCache } from "./ttl-cache";

export interface AuthorizerOptions {
  readonly client: KubeAuthClient;
  /** This node's name: the SubjectAccessReview's resourceName. */
  readonly node: string;
  /** Namespace of the SubjectAccessReview; "" for a cluster-scoped check. @default "" */
  readonly namespace?: string;
  /** Audiences a token must be bound to. @default [nodeAudience(node)]: "pulumi-lvm-agent/<node>" */
  readonly audiences?: readonly string[];
  /** How long a decision (allowed or denied) is reused; errors are never cached. @default 10000 */
  readonly cacheTtlMs?: number;
  /** Bound of the decision cache. @default 1024 */
  readonly cacheSize?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

/** What every /v1 call needs: `update` on this node's LVMNode. */
export const REQUIRED_ACCESS = { verb: "update", group: API_GROUP, resource: "lvmnodes" } as const;

export type AuthOutcome =
  | { readonly ok: true; readonly user: ReviewedUser }
  | {
      readonly ok: false;
      readonly status: 401 | 403 | 503;
      readonly message: string;
      /** 503: what went wrong reaching the API server (its URL, its answer): for the log, never for the caller. */
      readonly detail?: string;
    };

/**
 * Authenticates and authorizes one request the way the kubelet's webhook mode does: the bearer
 * token goes to a TokenReview (bound to our audiences), the user it names to a SubjectAccessReview
 * for `update` on `lvmnodes.lvm.topolvm.io/<node>`. Decisions are cached by the token's sha256 for a
 * short TTL in a bounded cache; failures to reach the API server are not cached (503).
 */
export function createAuthorizer(
  options: AuthorizerOptions,
): (authorization: string | undefined) => Promise<AuthOutcome> {
  const audiences = options.audiences ?? [nodeAudience(options.node)];
  const attributes: ResourceAttributes = {
    ...REQUIRED_ACCESS,
    name: options.node,
    ...(options.namespace ? { namespace: options.namespace } : {}),
  };
  const cache = new TtlCache<AuthOutcome>({
    ttlMs: options.cacheTtlMs ?? 10_000,
    maxEntries: options.cacheSize ?? 1024,
    ...(options.now ? { now: options.now } : {}),
  });
  const what = `${attributes.verb} ${attributes.resource}.${attributes.group}/${attributes.name}${attributes.namespace ? ` in namespace ${attributes.namespace}` : ""}`;

  return async (authorization) => {
    const token = bearerToken(authorization);
    if (!token)
      return {
        ok: false,
        status: 401,
        message:
          "a bearer token is required (Authorization: Bearer <token>; through the API server's pod proxy, X-Pulumi-Lvm-Authorization: Bearer <token>)",
      };
    const key = createHash("sha256").update(token).digest("hex");
    const cached = cache.get(key);
    if (cached) return cached;
    let outcome: AuthOutcome;
    try {
      const review = await options.client.tokenReview(token, audiences);
      if (!review.authenticated)
        outcome = { ok: false, status: 401, message: "the bearer token was not accepted" };
      else if (audiences.length && !review.audiences?.some((a) => audiences.includes(a)))
        outcome = {
          ok: false,
          status: 401,
          message: `the bearer token is not bound to audience ${audiences.join(" or ")}`,
        };
      else {
        const decision = await options.client.subjectAccessReview(
          review.user.username,
          review.user.groups,
          attributes,
        );
        outcome = decision.allowed
          ? { ok: true, user: review.user }
          : {
              ok: false,
              status: 403,
              message: `user "${review.user.username}" may not ${what}${decision.reason ? `: ${decision.reason}` : ""}`,
            };
      }
    } catch (e) {
      return {
        ok: false,
        status: 503,
        message:
          "cannot check the credentials now: the Kubernetes API server did not answer the review; try again",
        detail: e instanceof Error ? e.message : String(e),
      };
    }
    cache.set(key, outcome);
    return outcome;
  };
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const m = /^Bearer +([^\s]+) *$/i.exec(header ?? "");
  return m?.[1];
}
