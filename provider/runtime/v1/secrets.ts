/**
 * Agent tokens in what the provider hands back to the engine. The dynamic-provider host does not
 * accept secrets, so the engine sends every token as plain text; whatever the provider returns
 * (checked inputs, outputs, refreshed outputs) carries each token wrapped in Pulumi's secret
 * signature, which the engine keeps and stores encrypted. So a token is never in the state in plain
 * text, even for a caller that did not pass it as a secret.
 */

/** Pulumi's wire form of a secret: `{ [SECRET_SIGNATURE_KEY]: SECRET_SIGNATURE, value }` (@pulumi/pulumi runtime/rpc). */
export const SECRET_SIGNATURE_KEY = "4dabf18193072939515e22adb298388d";
export const SECRET_SIGNATURE = "1b47061264138c4ac30d75fd1eb44270";

/** Props with every `agents.<node>.token` that is a string wrapped as a secret; anything else as it is. */
export function sealTokens<T extends Record<string, unknown>>(props: T, unknown: string): T {
  const agents = props.agents;
  if (!isRecord(agents)) return props;
  const sealed = Object.fromEntries(
    Object.entries(agents).map(([node, agent]) => [
      node,
      isRecord(agent) && typeof agent.token === "string" && agent.token !== unknown
        ? { ...agent, token: { [SECRET_SIGNATURE_KEY]: SECRET_SIGNATURE, value: agent.token } }
        : agent,
    ]),
  );
  return { ...props, agents: sealed };
}

/** The value with every secret replaced by its plain value (what the engine itself would send). */
export function unseal(value: unknown): unknown {
  if (isRecord(value) && value[SECRET_SIGNATURE_KEY] === SECRET_SIGNATURE) return unseal(value.value);
  if (Array.isArray(value)) return value.map(unseal);
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unseal(v)]));
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
