import { readFile } from "node:fs/promises";

/**
 * The operator's token for the agents: a service-account token bound to the audience
 * "pulumi-lvm-agent". In a pod it is a projected `serviceAccountToken` volume (the kubelet writes
 * and rotates it), so the operator needs no permission to mint tokens; tests write a TokenRequest's
 * token to a file the same way.
 */
export type AgentTokenSource = () => Promise<string>;

/** Reads `file` on every call: the kubelet replaces it before it expires. The token is never logged. */
export function tokenFromFile(file: string): AgentTokenSource {
  return async () => {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (e) {
      throw new Error(
        `cannot read the agent token ${file} (a projected serviceAccountToken with audience pulumi-lvm-agent): ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    }
    const token = text.trim();
    if (!token) throw new Error(`the agent token file ${file} is empty`);
    return token;
  };
}
