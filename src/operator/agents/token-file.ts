import { readFile } from "node:fs/promises";

/**
 * The operator's token for one node's agent. By default a TokenRequest per node, bound to that
 * node's audience (token-request.ts); `tokenFromFile` is the explicit alternative for agents that
 * accept one static token (`--agent-token-file`, e.g. a sandbox).
 */
export type AgentTokenSource = (node: string) => Promise<string>;

/**
 * Reads `file` on every call (whoever writes it may replace it before it expires), the same token for
 * every node: such a token must be one each agent accepts, so any agent that sees it can replay it at
 * the others. The token is never logged.
 */
export function tokenFromFile(file: string): AgentTokenSource {
  return async () => {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (e) {
      throw new Error(
        `cannot read the agent token ${file} (--agent-token-file): ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    }
    const token = text.trim();
    if (!token) throw new Error(`the agent token file ${file} is empty`);
    return token;
  };
}
