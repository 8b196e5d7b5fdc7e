/**
 * Credentials in what the provider hands back to the engine: agent tokens (sandbox mode) and the
 * kubeconfig (cluster mode). The dynamic-provider host does not accept secrets, so the engine sends
 * them as plain text; whatever the provider returns (checked inputs, outputs, refreshed outputs,
 * the properties of a partial failure) carries each wrapped in Pulumi's secret signature, which the
 * engine keeps and stores encrypted. So a credential is never in the state in plain text, even for
 * a caller that did not pass it as a secret.
 */

/** Pulumi's wire form of a secret: `{ [SECRET_SIGNATURE_KEY]: SECRET_SIGNATURE, value }` (@pulumi/pulumi runtime/rpc). */
export const SECRET_SIGNATURE_KEY = "4dabf18193072939515e22adb298388d";
export const SECRET_SIGNATURE = "1b47061264138c4ac30d75fd1eb44270";

/**
 * Props with every `agents.<node>.token` and `cluster.kubeconfig` that is a string wrapped as a
 * secret; anything else (an unknown value during preview, an already sealed one) as it is.
 */
export function sealSecrets<T extends Record<string, unknown>>(props: T, unknown: string): T {
  const seal = (value: unknown) =>
    typeof value === "string" && value !== unknown
      ? { [SECRET_SIGNATURE_KEY]: SECRET_SIGNATURE, value }
      : value;
  const { agents, cluster } = props;
  return {
    ...props,
    ...(isRecord(agents)
      ? {
          agents: Object.fromEntries(
            Object.entries(agents).map(([node, agent]) => [
              node,
              isRecord(agent) && "token" in agent ? { ...agent, token: seal(agent.token) } : agent,
            ]),
          ),
        }
      : {}),
    ...(isRecord(cluster) && "kubeconfig" in cluster
      ? { cluster: { ...cluster, kubeconfig: seal(cluster.kubeconfig) } }
      : {}),
  };
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
