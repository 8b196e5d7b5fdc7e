import * as k8s from "@pulumi/kubernetes";
import { agentImageRef } from "./image-ref";
import { httpProbes } from "./probes";
import { agentCertificateManifest, agentTlsSecretName, operatorIssuedAgentSecret } from "./agent-tls";
import type { LvmSystemArgs } from "./lvm-system-args";
import { clusterRoleBinding, serviceAccountManifest } from "./system-rbac";
import type { SystemPlan } from "./system-plan";
import type { WorkloadContext } from "./workload-context";

/*
 * The node agent as LvmSystem deploys it: its service account, its delegated-auth binding, and the
 * privileged DaemonSet that runs lvm on every storage node.
 */

export const DEFAULT_AGENT_PORT = 8080;
/** The agent's state (operation journal) survives pod restarts here, so an interrupted apply resumes. */
export const AGENT_STATE_DIR = "/var/lib/pulumi-lvm";
const TLS_DIR = "/etc/pulumi-lvm/tls";
/** lvm runs in the host's namespaces (its /etc/lvm, lock files and udev), entered through PID 1. */
export const HOST_COMMAND_PREFIX = "nsenter --target 1 --mount --uts --ipc --net --pid --";

/**
 * The agent's ServiceAccount, its system:auth-delegator binding (TokenReview and SubjectAccessReview
 * create, for delegated authentication and authorization of callers, as the kubelet does), the
 * cert-manager Certificate of its Secret when cert-manager issues it, and its DaemonSet.
 */
export function agentManifests(plan: SystemPlan, args: LvmSystemArgs) {
  const certificate = agentCertificateManifest(plan.agent, plan.namespace, args);
  return {
    serviceAccount: serviceAccountManifest(plan.agent, plan.namespace),
    authDelegator: clusterRoleBinding(
      `${plan.agent}-auth-delegator`,
      plan.agent,
      plan.namespace,
      "system:auth-delegator",
    ),
    ...(certificate ? { certificate } : {}),
    daemonSet: agentDaemonSet(plan, args),
  };
}

/**
 * agentManifests' objects as resources: the DaemonSet after cert-manager's Certificate when it
 * issues the agents' Secret, beside the operator when the operator does (the agents wait for it,
 * --tls-await: a minute less of every first install than waiting for the operator's rollout, which
 * itself waits for the kubelet to bring its own Secret).
 */
export function agentWorkload(m: ReturnType<typeof agentManifests>, at: WorkloadContext) {
  const { parent, namespace: ns } = at;
  const name = m.daemonSet.metadata.name;
  const serviceAccount = new k8s.core.v1.ServiceAccount(name, m.serviceAccount, { parent, dependsOn: [ns] });
  const authDelegator = new k8s.rbac.v1.ClusterRoleBinding(m.authDelegator.metadata.name, m.authDelegator, {
    parent,
    dependsOn: [serviceAccount],
  });
  // HTTPS by default: the Secret the agents serve with, the user's, cert-manager's or the operator's.
  const certificate = m.certificate
    ? new k8s.apiextensions.CustomResource(m.certificate.metadata.name, m.certificate, {
        parent,
        dependsOn: [ns, ...at.crds],
      })
    : undefined;
  // After the auth-delegator binding: without it an agent refuses every caller (its TokenReviews are
  // forbidden) until the binding exists, and a destroy removes the agents before it.
  const daemonSet = new k8s.apps.v1.DaemonSet(name, m.daemonSet, {
    parent,
    dependsOn: [ns, serviceAccount, authDelegator, ...(certificate ? [certificate] : []), ...at.crds],
  });
  return { serviceAccount, daemonSet };
}

/** The agent DaemonSet. */
export function agentDaemonSet(plan: SystemPlan, args: LvmSystemArgs) {
  const port = args.agentPort ?? DEFAULT_AGENT_PORT;
  const hostPath = (name: string, path: string, type: string) => ({ name, hostPath: { path, type } });
  const tls = agentTlsSecretName(plan.agent, args);
  return {
    apiVersion: "apps/v1" as const,
    kind: "DaemonSet" as const,
    metadata: { name: plan.agent, namespace: plan.namespace, labels: plan.selectorLabels },
    spec: {
      selector: { matchLabels: plan.selectorLabels },
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1 } },
      template: {
        metadata: { labels: plan.selectorLabels },
        spec: {
          serviceAccountName: plan.agent,
          // lvm must run in the host's namespaces (its /etc/lvm, udev, lock files): the agent runs it
          // through HOST_COMMAND_PREFIX (nsenter --target 1), which needs the host's PID 1 visible.
          hostPID: true,
          nodeSelector: args.nodeSelector ?? { "kubernetes.io/os": "linux" },
          tolerations: args.tolerations ?? [],
          ...(args.priorityClassName ? { priorityClassName: args.priorityClassName } : {}),
          // A stopping agent finishes the step it is in (an lvm command is not interrupted).
          terminationGracePeriodSeconds: 120,
          containers: [
            {
              name: "agent",
              image: agentImageRef(args),
              imagePullPolicy: args.agentImagePullPolicy ?? "IfNotPresent",
              command: args.agentCommand ?? ["pulumi-lvm", "agent"],
              args: agentFlags(plan, args),
              env: [
                { name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
                { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
              ],
              ports: [{ name: "http", containerPort: port, protocol: "TCP" }],
              // Privileged, with justification: pvcreate/vgcreate/lvcreate open arbitrary block
              // devices (including disks hot-plugged after the pod started, which a device cgroup
              // allow-list cannot name in advance), issue device-mapper ioctls and need CAP_SYS_ADMIN
              // to enter the host's mount namespace. No narrower securityContext allows all of that.
              securityContext: { privileged: true, runAsUser: 0 },
              // Tolerant of a loaded node (probes.ts): a kill mid-command costs more than a late answer.
              ...httpProbes(tls ? "HTTPS" : "HTTP"),
              resources: args.agentResources ?? {
                requests: { cpu: "20m", memory: "64Mi" },
                limits: { memory: "256Mi" },
              },
              volumeMounts: [
                { name: "dev", mountPath: "/dev", mountPropagation: "HostToContainer" },
                { name: "run-topolvm", mountPath: "/run/topolvm" },
                { name: "etc-topolvm", mountPath: "/etc/topolvm" },
                { name: "state", mountPath: AGENT_STATE_DIR },
                ...(tls ? [{ name: "tls", mountPath: TLS_DIR, readOnly: true }] : []),
              ],
            },
          ],
          volumes: [
            // Live device nodes, including disks that appear after the pod started.
            hostPath("dev", "/dev", "Directory"),
            // lvmd's socket, shared with TopoLVM.
            hostPath("run-topolvm", "/run/topolvm", "DirectoryOrCreate"),
            // lvmd.yaml, written by the agent from the plan.
            hostPath("etc-topolvm", "/etc/topolvm", "DirectoryOrCreate"),
            hostPath("state", AGENT_STATE_DIR, "DirectoryOrCreate"),
            // The operator's Secret may come after the pod (the agent waits for it, --tls-await; the
            // kubelet fills the volume when it appears); yours or cert-manager's must be there.
            ...(tls
              ? [
                  {
                    name: "tls",
                    secret: {
                      secretName: tls,
                      ...(operatorIssuedAgentSecret(plan.agent, args) ? { optional: true } : {}),
                    },
                  },
                ]
              : []),
          ],
        },
      },
    },
  };
}

/**
 * The agent's flags (src/agent/config.ts): serve on the pod network, check callers' access to
 * LVMNodes in this namespace, run lvm in the host's namespaces, keep state on the host.
 */
export function agentFlags(plan: SystemPlan, args: LvmSystemArgs): string[] {
  const tls = agentTlsSecretName(plan.agent, args)
    ? [
        "--tls-cert",
        `${TLS_DIR}/tls.crt`,
        "--tls-key",
        `${TLS_DIR}/tls.key`,
        // Issued by the operator, which starts beside the agents: waited for, not a failed start.
        ...(operatorIssuedAgentSecret(plan.agent, args) ? ["--tls-await"] : []),
      ]
    : ["--allow-plain-http"];
  return [
    "--listen",
    `0.0.0.0:${args.agentPort ?? DEFAULT_AGENT_PORT}`,
    ...tls,
    "--namespace",
    plan.namespace,
    "--command-prefix",
    HOST_COMMAND_PREFIX,
    "--state-dir",
    `${AGENT_STATE_DIR}/agent`,
    "--lvmd-config",
    "/etc/topolvm/lvmd.yaml",
    ...(args.agentArgs ?? []),
  ];
}
