import { createHash, timingSafeEqual } from "node:crypto";
import * as fs from "node:fs";
import type { AccessDecision, KubeAuthClient, ResourceAttributes, TokenReviewResult } from "./kube-auth";

/** One line of a static token file: `token,user,node-or-*`. */
export interface StaticToken {
  readonly user: string;
  /** The node this token may call, or "*" for every node. */
  readonly node: string;
  readonly digest: Buffer;
}

/** The group a token-file review puts its line's node scope in ("pulumi-lvm:token-file-node:<node-or-*>"). */
export const LINE_SCOPE_GROUP = "pulumi-lvm:token-file-node:";

/** Tokens shorter than this are refused when the file is read: a guessable token is no token. */
export const MIN_TOKEN_LENGTH = 16;

/**
 * The static token file mode, for the local sandbox without an API server: a file of
 * `token,user,node-or-*` lines (`#` comments and blank lines ignored). It answers the same two
 * questions as the API server: a token is authenticated when it is in the file (compared in
 * constant time, by sha256, against every line), and it may call this agent when its own line names
 * this node or `*` (another line of the same user does not count).
 */
export function createTokenFileClient(file: string): KubeAuthClient {
  return createStaticTokenClient(parseTokenFile(fs.readFileSync(file, "utf8"), file));
}

export function createStaticTokenClient(tokens: readonly StaticToken[]): KubeAuthClient {
  return {
    async tokenReview(token: string, audiences: readonly string[]): Promise<TokenReviewResult> {
      const digest = sha256(token);
      let match: StaticToken | undefined;
      for (const t of tokens) if (timingSafeEqual(t.digest, digest) && !match) match = t;
      if (!match) return { authenticated: false, error: "unknown token" };
      // Static tokens are not audience-bound: like the API server's token file, valid for the audiences asked.
      // The line's node scope travels with the identity: a token is authorized by its own line, not by
      // any line of the same user.
      return {
        authenticated: true,
        user: { username: match.user, groups: [`${LINE_SCOPE_GROUP}${match.node}`] },
        audiences: [...audiences],
      };
    },
    async subjectAccessReview(
      user: string,
      groups: readonly string[],
      attributes: ResourceAttributes,
    ): Promise<AccessDecision> {
      const scopes = groups
        .filter((g) => g.startsWith(LINE_SCOPE_GROUP))
        .map((g) => g.slice(LINE_SCOPE_GROUP.length));
      const allowed =
        tokens.some((t) => t.user === user) && scopes.some((n) => n === "*" || n === attributes.name);
      return allowed
        ? { allowed }
        : { allowed, reason: `the token file gives "${user}" no access to node ${attributes.name}` };
    },
  };
}

/** Parses the file; throws naming the file and line of every problem. Tokens never appear in errors. */
export function parseTokenFile(text: string, file = "token file"): StaticToken[] {
  const tokens: StaticToken[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith("#")) return;
    const fields = line.split(",").map((f) => f.trim());
    const where = `${file}:${i + 1}`;
    if (fields.length !== 3)
      return problems.push(`${where}: expected "token,user,node-or-*" (3 fields, got ${fields.length})`);
    const [token, user, node] = fields as [string, string, string];
    if (token.length < MIN_TOKEN_LENGTH)
      return problems.push(`${where}: the token is shorter than ${MIN_TOKEN_LENGTH} characters`);
    if (/\s/.test(token)) return problems.push(`${where}: the token contains whitespace`);
    if (!user) return problems.push(`${where}: the user is empty`);
    if (!node) return problems.push(`${where}: the node is empty (use * for every node)`);
    const digest = sha256(token);
    const hex = digest.toString("hex");
    if (seen.has(hex)) return problems.push(`${where}: the same token is on an earlier line`);
    seen.add(hex);
    tokens.push({ user, node, digest });
  });
  if (problems.length) throw new Error(`invalid token file:\n  ${problems.join("\n  ")}`);
  if (tokens.length === 0) throw new Error(`${file} has no tokens`);
  return tokens;
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
