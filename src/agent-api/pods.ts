/**
 * How the agent (and operator) pods are found: shared by the components that deploy them, the
 * clients that call them and the support bundle that reads their logs.
 */

/** The label every agent pod carries (the LvmSystem DaemonSet's pod template). */
export const AGENT_POD_LABELS = { "app.kubernetes.io/name": "pulumi-lvm-agent" } as const;
/** The container that serves the agent's API, and the name of its port. */
export const AGENT_CONTAINER = "agent";
export const AGENT_PORT_NAME = "http";
/** The label every operator pod carries (LvmSystem's operator Deployment). */
export const OPERATOR_POD_LABELS = { "app.kubernetes.io/name": "pulumi-lvm-operator" } as const;
