import { AGENT_SERVER_NAME } from "../agent-api/auth";
import { certManagerCertificate, type CertificateSettings } from "./certificate-settings";

/** What LvmSystem needs to know to decide how the operator and the agents talk. */
export interface AgentTlsArgs {
  /** A kubernetes.io/tls Secret you manage (tls.crt, tls.key and ca.crt, e.g. from cert-manager). */
  readonly agentTlsSecretName?: string;
  /** Serve plain HTTP: the explicit opt-out. */
  readonly agentPlainHttp?: boolean;
  readonly certificates?: CertificateSettings;
  readonly operator?: { readonly enabled?: boolean };
}

/**
 * The Secret the agents serve HTTPS with and the operator takes the agents' CA from: yours
 * (`agentTlsSecretName`), else `<agent>-serving`, issued by the operator or by cert-manager
 * (`certificates.issuerRef`); undefined only with `agentPlainHttp`.
 */
export function agentTlsSecretName(agent: string, args: AgentTlsArgs): string | undefined {
  if (args.agentPlainHttp) return undefined;
  return args.agentTlsSecretName ?? `${agent}-serving`;
}

/** The agents' Secret when the operator issues it: neither yours nor cert-manager's, and HTTPS. */
export function operatorIssuedAgentSecret(agent: string, args: AgentTlsArgs): string | undefined {
  if (args.agentPlainHttp || args.agentTlsSecretName || args.certificates?.issuerRef) return undefined;
  return agentTlsSecretName(agent, args);
}

/** Both set: which one is meant? No operator and no other issuer: no one would issue the certificate. */
export function agentTlsProblems(args: AgentTlsArgs): Array<{ path: string; message: string }> {
  if (args.agentPlainHttp && args.agentTlsSecretName)
    return [
      {
        path: "agentPlainHttp",
        message: "excludes agentTlsSecretName: serve HTTPS with that Secret, or plain HTTP",
      },
    ];
  if (
    args.operator?.enabled === false &&
    !args.agentPlainHttp &&
    !args.agentTlsSecretName &&
    !args.certificates?.issuerRef
  )
    return [
      {
        path: "operator.enabled",
        message:
          "false leaves no one to issue the agents' serving certificate (the operator issues it): give agentTlsSecretName, certificates.issuerRef (cert-manager) or agentPlainHttp",
      },
    ];
  return [];
}

/**
 * With `certificates.issuerRef` and no Secret of yours: a cert-manager Certificate for the agents'
 * Secret (a leaf for AGENT_SERVER_NAME, a new key at each renewal). Whoever applies it manages the
 * Certificate, cert-manager the Secret.
 */
export function agentCertificateManifest(agent: string, namespace: string, args: AgentTlsArgs) {
  const issuerRef = args.certificates?.issuerRef;
  const secretName = agentTlsSecretName(agent, args);
  if (!issuerRef || !secretName || args.agentTlsSecretName) return undefined;
  return certManagerCertificate(
    `${agent}-serving`,
    namespace,
    secretName,
    [AGENT_SERVER_NAME],
    { ...args.certificates, issuerRef },
    { "app.kubernetes.io/name": "pulumi-lvm-agent" },
  );
}
