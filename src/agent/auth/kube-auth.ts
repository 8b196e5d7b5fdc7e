/**
 * The Kubernetes API calls the agent's authentication and authorization need, as a seam: the real
 * client (kube-client.ts) talks to an API server; the static token file (token-file.ts) answers
 * locally; tests pass their own.
 */
export interface KubeAuthClient {
  /** POST authentication.k8s.io/v1 TokenReview: who is this bearer token, for these audiences? */
  tokenReview(token: string, audiences: readonly string[]): Promise<TokenReviewResult>;
  /** POST authorization.k8s.io/v1 SubjectAccessReview: may this user do this? */
  subjectAccessReview(
    user: string,
    groups: readonly string[],
    attributes: ResourceAttributes,
  ): Promise<AccessDecision>;
}

export interface ReviewedUser {
  readonly username: string;
  readonly uid?: string;
  readonly groups: readonly string[];
}

export type TokenReviewResult =
  | { readonly authenticated: true; readonly user: ReviewedUser; readonly audiences?: readonly string[] }
  | { readonly authenticated: false; readonly error?: string };

export interface ResourceAttributes {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly name: string;
  /** Empty or absent for a cluster-scoped check. */
  readonly namespace?: string;
}

export interface AccessDecision {
  readonly allowed: boolean;
  readonly reason?: string;
}
