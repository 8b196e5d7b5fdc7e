import { fileSource } from "./file-source";

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
  return fileSource<string>(file, "the agent token", "--agent-token-file", (text) =>
    text.trim() ? { value: text.trim() } : { problem: `the agent token file ${file} is empty` },
  );
}
