import { createKubeClient } from "../../kube/client";
import type { KubeConnection } from "../../kube/connection";
import type { AccessDecision, KubeAuthClient, ResourceAttributes, TokenReviewResult } from "./kube-auth";

export interface KubeClientOptions {
  /** Per-request timeout. @default 5000 */
  readonly timeoutMs?: number;
}

/** Reviews are small; a larger answer is not the API server's. */
const MAX_REVIEW_BYTES = 1024 * 1024;

/** TokenReview and SubjectAccessReview with the one Kubernetes client (src/kube). */
export function createKubeAuthClient(conn: KubeConnection, options: KubeClientOptions = {}): KubeAuthClient {
  const kube = createKubeClient({
    connection: conn,
    timeoutMs: options.timeoutMs ?? 5000,
    maxBodyBytes: MAX_REVIEW_BYTES,
  });
  return {
    async tokenReview(token: string, audiences: readonly string[]): Promise<TokenReviewResult> {
      const r = await kube.postPath("/apis/authentication.k8s.io/v1/tokenreviews", {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenReview",
        spec: { token, ...(audiences.length ? { audiences } : {}) },
      });
      const status = (r as { status?: TokenReviewStatus }).status ?? {};
      if (!status.authenticated || !status.user?.username)
        return { authenticated: false, ...(status.error ? { error: status.error } : {}) };
      return {
        authenticated: true,
        user: {
          username: status.user.username,
          ...(status.user.uid ? { uid: status.user.uid } : {}),
          groups: status.user.groups ?? [],
        },
        ...(status.audiences ? { audiences: status.audiences } : {}),
      };
    },
    async subjectAccessReview(
      user: string,
      groups: readonly string[],
      attributes: ResourceAttributes,
    ): Promise<AccessDecision> {
      const r = await kube.postPath("/apis/authorization.k8s.io/v1/subjectaccessreviews", {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        spec: { user, groups, resourceAttributes: attributes },
      });
      const status =
        (r as { status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string } })
          .status ?? {};
      const reason = [status.reason, status.evaluationError].filter(Boolean).join("; ");
      return { allowed: status.allowed === true && status.denied !== true, ...(reason ? { reason } : {}) };
    },
  };
}

interface TokenReviewStatus {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[] };
  audiences?: string[];
  error?: string;
}
