import { operatorIssuedAgentSecret } from "./agent-tls";
import { webhookConfigurationName, webhookDnsName, webhookTlsSecretName } from "./admission";
import { DEFAULT_VALIDITY_DAYS, type OperatorIssuance } from "./certificate-settings";
import type { LvmSystemArgs } from "./lvm-system-args";
import type { SystemPlan } from "./system-plan";

/**
 * What LvmSystem's operator issues (src/operator/certificates): the agents' Secret unless it is the
 * user's or plain HTTP, the webhook's unless admission is off; nothing with cert-manager
 * (`certificates.issuerRef`). Undefined: nothing to issue.
 */
export function operatorIssuance(plan: SystemPlan, args: LvmSystemArgs): OperatorIssuance | undefined {
  if (!plan.operator || args.certificates?.issuerRef) return undefined;
  const agentSecret = operatorIssuedAgentSecret(plan.agent, args);
  const webhookSecret = webhookTlsSecretName(plan.operator, args.operator?.admission);
  const webhook =
    webhookSecret && !args.operator?.admission?.certManagerIssuer
      ? {
          secret: webhookSecret,
          dnsName: webhookDnsName(plan.namespace, plan.operator),
          configuration: webhookConfigurationName(plan.namespace, plan.operator),
        }
      : undefined;
  if (!agentSecret && !webhook) return undefined;
  return {
    caSecret: `${plan.operator}-ca`,
    ...(agentSecret ? { agentSecret } : {}),
    ...(webhook ? { webhook } : {}),
    validityDays: args.certificates?.validityDays ?? DEFAULT_VALIDITY_DAYS,
    rotation: args.certificates?.rotation ?? 0,
  };
}
