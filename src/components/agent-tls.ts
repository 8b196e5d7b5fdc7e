import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { issueAgentCertificates } from "./agent-certificates";

/** What LvmSystem needs to know to decide how the operator and the agents talk. */
export interface AgentTlsArgs {
  /** A kubernetes.io/tls Secret you manage (tls.crt, tls.key and ca.crt, e.g. from cert-manager). */
  readonly agentTlsSecretName?: string;
  /** Serve plain HTTP: the explicit opt-out. */
  readonly agentPlainHttp?: boolean;
}

/**
 * The Secret the agents serve HTTPS with and the operator takes the agents' CA from: yours
 * (`agentTlsSecretName`), else the one LvmSystem generates, `<agent>-tls`; undefined only with
 * `agentPlainHttp`.
 */
export function agentTlsSecretName(agent: string, args: AgentTlsArgs): string | undefined {
  if (args.agentPlainHttp) return undefined;
  return args.agentTlsSecretName ?? `${agent}-tls`;
}

/** Both set: which one is meant? */
export function agentTlsProblems(args: AgentTlsArgs): Array<{ path: string; message: string }> {
  return args.agentPlainHttp && args.agentTlsSecretName
    ? [
        {
          path: "agentPlainHttp",
          message: "excludes agentTlsSecretName: serve HTTPS with that Secret, or plain HTTP",
        },
      ]
    : [];
}

/**
 * The generated Secret (kubernetes.io/tls plus ca.crt): a CA made for this system and a serving
 * certificate for the fixed name `pulumi-lvm-agent` (src/components/agent-certificates.ts), the
 * CA's key discarded. The certificates are issued once, when the Secret is created: later runs
 * issue new ones in memory but `ignoreChanges` keeps the Secret as it is, so there is no
 * perpetual diff and no rotation by accident. Rotate by replacing the Secret
 * (`pulumi up --replace <its URN>`), then restart the agents (docs/operator.md). The key is a
 * Pulumi secret in the state.
 */
export function generatedAgentTlsSecret(
  name: string,
  namespace: string,
  opts: pulumi.CustomResourceOptions,
): k8s.core.v1.Secret {
  const issued = pulumi.output(issueAgentCertificates());
  return new k8s.core.v1.Secret(
    name,
    {
      metadata: { name, namespace, labels: { "app.kubernetes.io/name": "pulumi-lvm-agent" } },
      type: "kubernetes.io/tls",
      stringData: pulumi.secret(
        issued.apply((c) => ({ "tls.crt": c.cert, "tls.key": c.key, "ca.crt": c.caCert })),
      ),
    },
    { ...opts, ignoreChanges: ["data", "stringData"], additionalSecretOutputs: ["data", "stringData"] },
  );
}
