import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import YAML from "yaml";
import { AGENT_CONTAINER, AGENT_POD_LABELS, AGENT_PORT_NAME } from "../agent-api/pods";
import { ValidationError } from "../api";
import { LvmSystem, LVM_SYSTEM_TYPE, type LvmSystemArgs } from "./lvm-system";
import { DEFAULT_AGENT_CA_FILE } from "../agent-api/auth";
import { operatorRules, operatorTokenRules } from "./operator-rbac";
import { crdDirectory, tempDir } from "../../test/support/components/crd-fixtures";
import {
  find,
  installMocks,
  runFailingProgram,
  runProgram,
  type Recorded,
} from "../../test/support/components/pulumi-mocks";

const DS = "kubernetes:apps/v1:DaemonSet";
const CHART = "kubernetes:helm.sh/v4:Chart";
const DEPLOYMENT = "kubernetes:apps/v1:Deployment";
const CRD = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition";
const CRD_PATCH = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinitionPatch";

let crds: { dir: string; remove: () => void };
beforeAll(async () => {
  await installMocks();
  crds = crdDirectory();
});
afterAll(() => crds.remove());

function args(extra: Partial<LvmSystemArgs> = {}): LvmSystemArgs {
  return { agentImage: "ghcr.io/acme/pulumi-lvm-agent:0.1.0", crdDirectory: crds.dir, ...extra };
}

function outputOf<T>(o: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => o.apply(resolve));
}

const fastClass = {
  name: "fast",
  strategy: "Thin",
  volumeGroup: "vg-data",
  default: true,
  thin: { poolName: "pool0", sizePercent: 90, overprovisionRatio: 10 },
};
const bulkClass = { name: "bulk", strategy: "Thick", volumeGroup: "vg-bulk" };
const byZone = (zone: string) => ({
  nodeSelectorTerms: [
    { matchExpressions: [{ key: "topology.kubernetes.io/zone", operator: "In", values: [zone] }] },
  ],
});
const disks = {
  deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "In", values: ["vdb"] }] }],
};
/** Two zones with different hardware: north a thin and a thick class on two groups, south one thick class. */
const north = {
  name: "north",
  nodeSelector: byZone("north"),
  template: {
    volumeGroups: [
      { name: "vg-data", deviceSelector: disks },
      { name: "vg-bulk", deviceSelector: disks },
    ],
    deviceClasses: [fastClass, bulkClass],
  },
};
const south = {
  name: "south",
  nodeSelector: byZone("south"),
  template: { volumeGroups: [{ name: "vg-bulk", deviceSelector: disks }], deviceClasses: [bulkClass] },
};
const LVMD_FAST = {
  name: "fast",
  "volume-group": "vg-data",
  default: true,
  type: "thin",
  "spare-gb": 0,
  "thin-pool": { name: "pool0", "overprovision-ratio": 10 },
};
const LVMD_BULK = { name: "bulk", "volume-group": "vg-bulk", type: "thick", "spare-gb": 0 };
const affinity = (selector: object) => ({
  nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: selector },
});

describe("LvmSystem", () => {
  let recorded: Recorded[];
  beforeAll(async () => {
    recorded = await runProgram(() => new LvmSystem("lvm", args()));
  });

  test("registers namespace, CRDs, agent, provisioner account, cluster-mode roles and operator, all its children", () => {
    expect(recorded.map((r) => [r.type, r.name])).toEqual([
      [LVM_SYSTEM_TYPE, "lvm"],
      ["kubernetes:core/v1:Namespace", "lvm-namespace"],
      [CRD_PATCH, "lvm-lvmnodes.lvm.topolvm.io"],
      [CRD_PATCH, "lvm-lvmnodesets.lvm.topolvm.io"],
      ["kubernetes:core/v1:ServiceAccount", "lvm-provisioner"],
      ["kubernetes:rbac.authorization.k8s.io/v1:Role", "lvm-provisioner"],
      ["kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", "lvm-provisioner"],
      ["kubernetes:rbac.authorization.k8s.io/v1:Role", "lvm-cluster-mode"],
      ["kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "lvm-cluster-mode"],
      // reviewed changes: who may approve a waiting plan
      ["kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "lvm-approver"],
      ["kubernetes:core/v1:ServiceAccount", "lvm-operator"],
      ["kubernetes:rbac.authorization.k8s.io/v1:Role", "lvm-operator"],
      ["kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", "lvm-operator"],
      ["kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "lvm-operator"],
      ["kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", "lvm-operator"],
      [DEPLOYMENT, "lvm-operator"],
      ["kubernetes:policy/v1:PodDisruptionBudget", "lvm-operator"],
      // admission (issue 17): the webhook's Service, certificate and configuration, the LVMNode policy
      // (no Secret: the operator issues the serving certificates, Pulumi holds no key)
      ["kubernetes:core/v1:Service", "lvm-operator-webhook"],
      ["kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration", "lvm-operator-webhook"],
      ["kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy", "lvm-operator-lvmnode-owner"],
      [
        "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding",
        "lvm-operator-lvmnode-owner",
      ],
      // the agents, beside the operator, which issues their Secret
      ["kubernetes:core/v1:ServiceAccount", "lvm-agent"],
      ["kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", "lvm-agent-auth-delegator"],
      [DS, "lvm-agent"],
      // network fences (network-policies.test.ts)
      ["kubernetes:networking.k8s.io/v1:NetworkPolicy", "lvm-agent-ingress"],
      ["kubernetes:networking.k8s.io/v1:NetworkPolicy", "lvm-operator-ingress"],
    ]);
    for (const r of recorded.slice(1)) expect(r.parent).toEqual({ type: LVM_SYSTEM_TYPE, name: "lvm" });
  });

  test("the namespace allows privileged pods (the agent needs them)", () => {
    expect(find(recorded, "kubernetes:core/v1:Namespace", "lvm-namespace").inputs.metadata).toEqual({
      name: "lvm-system",
      labels: { "pod-security.kubernetes.io/enforce": "privileged" },
    });
  });

  test("CRDs are applied from the YAML as written, as Patches kept on delete: created, adopted or upgraded", () => {
    const crd = find(recorded, CRD_PATCH, "lvm-lvmnodesets.lvm.topolvm.io");
    const written = YAML.parse(
      fs.readFileSync(path.join(crds.dir, "lvm.topolvm.io_lvmnodesets.yaml"), "utf8"),
    ) as Record<string, unknown>;
    // The manifest unchanged but for two annotations: server-side apply with force (an existing CRD,
    // e.g. one an earlier install kept, is taken over), always as the field manager "pulumi-lvm".
    expect(crd.inputs).toEqual({
      ...written,
      metadata: {
        name: "lvmnodesets.lvm.topolvm.io",
        annotations: { "pulumi.com/patchForce": "true", "pulumi.com/patchFieldManager": "pulumi-lvm" },
      },
    });
    expect(crd.inputs).toMatchObject({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      spec: { group: "lvm.topolvm.io", scope: "Namespaced", names: { kind: "LVMNodeSet" } },
    });
    expect(crd.opts.retainOnDelete).toBe(true);
    expect(recorded.filter((r) => r.type === CRD)).toEqual([]);
  });

  test("annotations a CRD file carries are kept beside ours", async () => {
    const annotated = tempDir(
      Object.fromEntries(
        fs
          .readdirSync(crds.dir)
          .map((f) => [
            f,
            fs
              .readFileSync(path.join(crds.dir, f), "utf8")
              .replace(/^metadata:\n/m, "metadata:\n  annotations:\n    example.com/owner: storage\n"),
          ]),
      ),
    );
    try {
      const got = await runProgram(() => new LvmSystem("lvm3", args({ crdDirectory: annotated.dir })));
      expect(find(got, CRD_PATCH, "lvm3-lvmnodes.lvm.topolvm.io").inputs.metadata.annotations).toEqual({
        "example.com/owner": "storage",
        "pulumi.com/patchForce": "true",
        "pulumi.com/patchFieldManager": "pulumi-lvm",
      });
    } finally {
      annotated.remove();
    }
  });

  test("retainCrdsOnDelete: false: plain CustomResourceDefinitions, as written, deleted with the stack", async () => {
    const deletable = await runProgram(() => new LvmSystem("lvm2", args({ retainCrdsOnDelete: false })));
    expect(deletable.filter((r) => r.type === CRD_PATCH)).toEqual([]);
    const crd = find(deletable, CRD, "lvm2-lvmnodes.lvm.topolvm.io");
    expect(crd.opts.retainOnDelete).toBe(false);
    expect(crd.inputs.metadata).toEqual({ name: "lvmnodes.lvm.topolvm.io" });
    expect(crd.parent).toEqual({ type: LVM_SYSTEM_TYPE, name: "lvm2" });
    // Whichever kind, the workloads wait for the CRDs.
    const ds = find(deletable, DS, "lvm2-agent");
    expect(ds.opts.dependsOn).toEqual(expect.arrayContaining([crd.resource]));
  });

  test("the agent reads nothing from the API: it only delegates authentication and authorization", () => {
    expect(
      recorded.filter((r) => /rbac/.test(r.type) && r.name.startsWith("lvm-agent")).map((r) => r.name),
    ).toEqual(["lvm-agent-auth-delegator"]);
    expect(
      find(recorded, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", "lvm-agent-auth-delegator")
        .inputs,
    ).toMatchObject({
      roleRef: { kind: "ClusterRole", name: "system:auth-delegator" },
      subjects: [{ kind: "ServiceAccount", name: "lvm-agent", namespace: "lvm-system" }],
    });
  });

  test("the operator: its rules in the namespace, nodes cluster-wide, bound to its own account", () => {
    const rules = operatorRules();
    expect(
      find(recorded, "kubernetes:rbac.authorization.k8s.io/v1:Role", "lvm-operator").inputs,
    ).toMatchObject({
      metadata: { name: "lvm-operator", namespace: "lvm-system" },
      rules: [
        ...rules.nodeSets,
        ...rules.agentPods,
        // the Lease its replicas elect a leader on
        { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "patch"] },
        // Events about its objects, and a repeated event's count
        { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
        // a token per node for its own service account, and for no other
        {
          apiGroups: [""],
          resources: ["serviceaccounts/token"],
          resourceNames: ["lvm-operator"],
          verbs: ["create"],
        },
        // the serving certificates it issues: create in its namespace, the rest on its Secrets by name
        { apiGroups: [""], resources: ["secrets"], verbs: ["create"] },
        {
          apiGroups: [""],
          resources: ["secrets"],
          resourceNames: ["lvm-operator-ca", "lvm-agent-serving", "lvm-operator-webhook-serving"],
          verbs: ["get", "update", "patch"],
        },
      ],
    });
    expect(operatorTokenRules("lvm-operator")).toHaveLength(1);
    expect(
      find(recorded, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "lvm-operator").inputs,
    ).toMatchObject({
      metadata: { name: "lvm-operator" },
      rules: [
        { apiGroups: [""], resources: ["nodes"], verbs: ["list", "watch"] },
        // issue 17: the classes of sets applied without Pulumi, created when missing, never changed
        { apiGroups: ["storage.k8s.io"], resources: ["storageclasses"], verbs: ["get", "create"] },
        {
          apiGroups: ["snapshot.storage.k8s.io"],
          resources: ["volumesnapshotclasses"],
          verbs: ["get", "create"],
        },
        { apiGroups: ["storage.k8s.io"], resources: ["csidrivers"], verbs: ["get"] },
        { apiGroups: ["storage.k8s.io"], resources: ["csinodes"], verbs: ["list"] },
        // issue 16: deleting a set with deletionPolicy Delete is refused while TopoLVM's volumes are in it
        { apiGroups: ["topolvm.io"], resources: ["logicalvolumes"], verbs: ["list"] },
        { apiGroups: [""], resources: ["persistentvolumes"], verbs: ["get"] },
        // an approval: does its giver have the verb approve on lvmnodes
        { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
        // the caBundle of its own webhook configuration, and of no other
        {
          apiGroups: ["admissionregistration.k8s.io"],
          resources: ["validatingwebhookconfigurations"],
          resourceNames: ["lvm-system-lvm-operator"],
          verbs: ["get", "patch"],
        },
      ],
    });
    expect(
      find(recorded, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "lvm-approver").inputs,
    ).toMatchObject({
      metadata: {
        name: "pulumi-lvm-approver",
        labels: { "rbac.authorization.k8s.io/aggregate-to-admin": "true" },
      },
      rules: [
        {
          apiGroups: ["lvm.topolvm.io"],
          resources: ["lvmnodes"],
          verbs: ["approve", "get", "list", "watch", "patch"],
        },
      ],
    });
    for (const type of ["RoleBinding", "ClusterRoleBinding"])
      expect(
        find(recorded, `kubernetes:rbac.authorization.k8s.io/v1:${type}`, "lvm-operator").inputs,
      ).toMatchObject({
        roleRef: { name: "lvm-operator" },
        subjects: [{ kind: "ServiceAccount", name: "lvm-operator", namespace: "lvm-system" }],
      });
  });

  test("the operator: two replicas electing a leader, rolled one at a time, spread over nodes, one at a time disrupted", () => {
    const spec = find(recorded, DEPLOYMENT, "lvm-operator").inputs.spec;
    expect(spec).toMatchObject({
      replicas: 2,
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
    });
    expect(spec.template.spec.affinity).toEqual({
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 100,
            podAffinityTerm: {
              topologyKey: "kubernetes.io/hostname",
              labelSelector: { matchLabels: spec.selector.matchLabels },
            },
          },
        ],
      },
    });
    expect(spec.template.spec.containers[0].args.join(" ")).toContain(
      "--leader-elect --leader-election-namespace lvm-system --leader-election-name lvm-operator",
    );
    expect(find(recorded, "kubernetes:policy/v1:PodDisruptionBudget", "lvm-operator").inputs).toMatchObject({
      metadata: { name: "lvm-operator", namespace: "lvm-system" },
      spec: { maxUnavailable: 1, selector: { matchLabels: spec.selector.matchLabels } },
    });
  });

  test("the operator and the agents start only after their RBAC bindings exist (and a destroy removes them first)", () => {
    const dependsOn = (type: string, name: string) => find(recorded, type, name).opts.dependsOn as unknown[];
    const binding = (type: string, name: string) => find(recorded, type, name).resource;
    expect(dependsOn(DEPLOYMENT, "lvm-operator")).toEqual(
      expect.arrayContaining([
        binding("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", "lvm-operator"),
        binding("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", "lvm-operator"),
      ]),
    );
    expect(dependsOn(DS, "lvm-agent")).toEqual(
      expect.arrayContaining([
        binding("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", "lvm-agent-auth-delegator"),
      ]),
    );
  });

  test("the operator runs unprivileged, in the namespace, with the agents' CA and nothing else of theirs", () => {
    const deployment = find(recorded, DEPLOYMENT, "lvm-operator");
    expect(deployment.opts.dependsOn).toBeDefined();
    const spec = deployment.inputs.spec;
    const pod = spec.template.spec;
    expect(pod.serviceAccountName).toBe("lvm-operator");
    expect(pod.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      seccompProfile: { type: "RuntimeDefault" },
    });
    const [container] = pod.containers;
    expect(container).toMatchObject({
      image: "ghcr.io/acme/pulumi-lvm-agent:0.1.0",
      command: ["pulumi-lvm", "operator"],
      args: [
        "--namespace",
        "lvm-system",
        "--agent-namespace",
        "lvm-system",
        "--listen",
        "0.0.0.0:8081",
        "--service-account",
        "lvm-system/lvm-operator",
        "--leader-elect",
        "--leader-election-namespace",
        "lvm-system",
        "--leader-election-name",
        "lvm-operator",
        // issue 17: the set's ProviderReady (TopoLVM's CSIDriver and CSINodes), on by default
        "--provider-ready",
        "--webhook-listen",
        "0.0.0.0:9443",
        "--webhook-cert-dir",
        "/var/run/secrets/pulumi-lvm/webhook-tls",
        // the serving certificates it issues and renews (src/operator/certificates)
        "--issue-certificates",
        "lvm-operator-ca",
        "--issue-agent-secret",
        "lvm-agent-serving",
        "--issue-webhook-secret",
        "lvm-operator-webhook-serving",
        "--issue-webhook-dns-name",
        "lvm-operator-webhook.lvm-system.svc",
        "--issue-webhook-configuration",
        "lvm-system-lvm-operator",
        "--certificate-days",
        "90",
        "--certificate-rotation",
        "0",
      ],
      securityContext: {
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ["ALL"] },
      },
      volumeMounts: [
        { name: "agent-ca", mountPath: "/var/run/secrets/pulumi-lvm/agent-ca", readOnly: true },
        { name: "webhook-tls", mountPath: "/var/run/secrets/pulumi-lvm/webhook-tls", readOnly: true },
      ],
    });
    expect(container.securityContext.privileged).toBeUndefined();
    // the file the operator reads by default (src/operator/config.ts): the CA only, never the agents' key
    expect(`${container.volumeMounts[0].mountPath}/ca.crt`).toBe(DEFAULT_AGENT_CA_FILE);
    expect(pod.volumes).toEqual([
      {
        name: "agent-ca",
        secret: {
          secretName: "lvm-agent-serving",
          items: [{ key: "ca.crt", path: "ca.crt" }],
          optional: true,
        },
      },
      { name: "webhook-tls", secret: { secretName: "lvm-operator-webhook-serving", optional: true } },
    ]);
  });

  test("callers of the agents need update on lvmnodes, which the agents' SubjectAccessReview checks", () => {
    expect(
      find(recorded, "kubernetes:rbac.authorization.k8s.io/v1:Role", "lvm-provisioner").inputs.rules,
    ).toEqual([{ apiGroups: ["lvm.topolvm.io"], resources: ["lvmnodes"], verbs: ["update"] }]);
  });

  test("NodeSet cluster mode: list nodes; in the namespace list and proxy to pods, a token for the provisioner only", () => {
    expect(
      find(recorded, "kubernetes:rbac.authorization.k8s.io/v1:Role", "lvm-cluster-mode").inputs,
    ).toMatchObject({
      metadata: { name: "lvm-cluster-mode", namespace: "lvm-system" },
      rules: [
        { apiGroups: [""], resources: ["pods"], verbs: ["list"] },
        { apiGroups: [""], resources: ["pods/proxy"], verbs: ["get", "create"] },
        {
          apiGroups: [""],
          resources: ["serviceaccounts/token"],
          resourceNames: ["lvm-provisioner"],
          verbs: ["create"],
        },
      ],
    });
    expect(
      find(recorded, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "lvm-cluster-mode").inputs.rules,
    ).toMatchObject([{ apiGroups: [""], resources: ["nodes"], verbs: ["list"] }]);
    // bound to nobody unless clusterModeSubjects says so
    expect(recorded.filter((r) => /Binding$/.test(r.type) && r.name.startsWith("lvm-cluster-mode"))).toEqual(
      [],
    );
  });

  test("clusterModeSubjects are bound to both cluster-mode roles", async () => {
    const bound = await runProgram(
      () =>
        new LvmSystem(
          "lvm4",
          args({
            clusterModeSubjects: [
              { kind: "Group", name: "platform-deployers" },
              { kind: "ServiceAccount", name: "ci" },
            ],
          }),
        ),
    );
    const subjects = [
      { kind: "Group", name: "platform-deployers", apiGroup: "rbac.authorization.k8s.io" },
      { kind: "ServiceAccount", name: "ci", namespace: "lvm-system" },
    ];
    expect(
      find(bound, "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", "lvm4-cluster-mode").inputs,
    ).toMatchObject({
      metadata: { name: "lvm4-cluster-mode", namespace: "lvm-system" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "lvm4-cluster-mode" },
      subjects,
    });
    expect(
      find(bound, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", "lvm4-cluster-mode").inputs,
    ).toMatchObject({
      metadata: { name: "lvm4-cluster-mode" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "lvm4-cluster-mode" },
      subjects,
    });
  });

  test("the agent pods carry what cluster mode finds them by: the label, the agent container and its http port", () => {
    const template = find(recorded, DS, "lvm-agent").inputs.spec.template;
    expect(template.metadata.labels).toMatchObject(AGENT_POD_LABELS);
    const container = template.spec.containers.find((c: { name: string }) => c.name === AGENT_CONTAINER);
    expect(container.ports.map((p: { name: string }) => p.name)).toContain(AGENT_PORT_NAME);
  });

  test("the agent DaemonSet: host PID, privileged, host paths, probes, resources", () => {
    const ds = find(recorded, DS, "lvm-agent");
    const pod = ds.inputs.spec.template.spec;
    const [container] = pod.containers;
    expect(pod.hostPID).toBe(true);
    expect(pod.serviceAccountName).toBe("lvm-agent");
    expect(pod.nodeSelector).toEqual({ "kubernetes.io/os": "linux" });
    expect(pod.tolerations).toEqual([]);
    expect(container.image).toBe("ghcr.io/acme/pulumi-lvm-agent:0.1.0");
    expect(container.securityContext).toEqual({ privileged: true, runAsUser: 0 });
    expect(container.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "http", scheme: "HTTPS" });
    // A slow start (a loaded node) gets 10 minutes before the liveness probe may kill the agent,
    // and a running agent is killed only after 3 minutes without an answer (probes.ts).
    expect(container.startupProbe).toMatchObject({
      httpGet: { path: "/healthz", port: "http", scheme: "HTTPS" },
    });
    expect(container.startupProbe.periodSeconds * container.startupProbe.failureThreshold).toBe(600);
    expect(container.livenessProbe.periodSeconds * container.livenessProbe.failureThreshold).toBe(180);
    expect(container.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "http", scheme: "HTTPS" });
    expect(container.ports).toEqual([{ name: "http", containerPort: 8080, protocol: "TCP" }]);
    expect(container.command).toEqual(["pulumi-lvm", "agent"]);
    expect(container.args).toEqual([
      "--listen",
      "0.0.0.0:8080",
      "--tls-cert",
      "/etc/pulumi-lvm/tls/tls.crt",
      "--tls-key",
      "/etc/pulumi-lvm/tls/tls.key",
      "--tls-await",
      "--namespace",
      "lvm-system",
      "--command-prefix",
      "nsenter --target 1 --mount --uts --ipc --net --pid --",
      "--state-dir",
      "/var/lib/pulumi-lvm/agent",
      "--lvmd-config",
      "/etc/topolvm/lvmd.yaml",
    ]);
    expect(container.resources).toEqual({
      requests: { cpu: "20m", memory: "64Mi" },
      limits: { memory: "256Mi" },
    });
    expect(container.env).toEqual([
      { name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
      { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
    ]);
    expect(container.volumeMounts.map((m: { mountPath: string }) => m.mountPath)).toEqual([
      "/dev",
      "/run/topolvm",
      "/etc/topolvm",
      "/var/lib/pulumi-lvm",
      "/etc/pulumi-lvm/tls",
    ]);
    expect(pod.volumes).toEqual([
      { name: "dev", hostPath: { path: "/dev", type: "Directory" } },
      { name: "run-topolvm", hostPath: { path: "/run/topolvm", type: "DirectoryOrCreate" } },
      { name: "etc-topolvm", hostPath: { path: "/etc/topolvm", type: "DirectoryOrCreate" } },
      { name: "state", hostPath: { path: "/var/lib/pulumi-lvm", type: "DirectoryOrCreate" } },
      { name: "tls", secret: { secretName: "lvm-agent-serving", optional: true } },
    ]);
    expect(ds.inputs.spec.selector.matchLabels).toEqual(ds.inputs.spec.template.metadata.labels);
  });

  test("agent settings: namespace, port, tolerations, node selector, resources, priority, args", async () => {
    const custom = await runProgram(
      () =>
        new LvmSystem(
          "edge",
          args({
            namespace: "storage",
            agentPort: 8443,
            agentArgs: ["--command-timeout", "5m"],
            agentTlsSecretName: "agent-tls",
            agentImagePullPolicy: "Always",
            tolerations: [{ key: "node-role.kubernetes.io/edge", operator: "Exists", effect: "NoSchedule" }],
            nodeSelector: { "acme.com/storage": "true" },
            agentResources: { requests: { cpu: "100m" } },
            priorityClassName: "system-node-critical",
            operator: {
              image: "ghcr.io/acme/op:1",
              args: ["--resync", "10m"],
              resources: { limits: { memory: "1Gi" } },
            },
          }),
        ),
    );
    const pod = find(custom, DS, "edge-agent").inputs.spec.template.spec;
    expect(pod).toMatchObject({
      tolerations: [{ key: "node-role.kubernetes.io/edge", operator: "Exists", effect: "NoSchedule" }],
      nodeSelector: { "acme.com/storage": "true" },
      priorityClassName: "system-node-critical",
    });
    expect(pod.containers[0]).toMatchObject({
      imagePullPolicy: "Always",
      ports: [{ containerPort: 8443 }],
      resources: { requests: { cpu: "100m" } },
      startupProbe: { httpGet: { scheme: "HTTPS" } },
      livenessProbe: { httpGet: { scheme: "HTTPS" } },
      readinessProbe: { httpGet: { scheme: "HTTPS" } },
    });
    expect(pod.containers[0].args).toEqual([
      "--listen",
      "0.0.0.0:8443",
      "--tls-cert",
      "/etc/pulumi-lvm/tls/tls.crt",
      "--tls-key",
      "/etc/pulumi-lvm/tls/tls.key",
      "--namespace",
      "storage",
      "--command-prefix",
      "nsenter --target 1 --mount --uts --ipc --net --pid --",
      "--state-dir",
      "/var/lib/pulumi-lvm/agent",
      "--lvmd-config",
      "/etc/topolvm/lvmd.yaml",
      "--command-timeout",
      "5m",
    ]);
    expect(pod.containers[0].volumeMounts).toContainEqual({
      name: "tls",
      mountPath: "/etc/pulumi-lvm/tls",
      readOnly: true,
    });
    expect(pod.volumes).toContainEqual({ name: "tls", secret: { secretName: "agent-tls" } });
    expect(find(custom, "kubernetes:core/v1:Namespace", "edge-namespace").inputs.metadata.name).toBe(
      "storage",
    );
    const operator = find(custom, DEPLOYMENT, "edge-operator").inputs.spec.template.spec.containers[0];
    expect(operator).toMatchObject({
      image: "ghcr.io/acme/op:1",
      imagePullPolicy: "Always",
      args: [
        "--namespace",
        "storage",
        "--agent-namespace",
        "storage",
        "--listen",
        "0.0.0.0:8081",
        "--service-account",
        "storage/edge-operator",
        "--leader-elect",
        "--leader-election-namespace",
        "storage",
        "--leader-election-name",
        "edge-operator",
        "--provider-ready",
        "--webhook-listen",
        "0.0.0.0:9443",
        "--webhook-cert-dir",
        "/var/run/secrets/pulumi-lvm/webhook-tls",
        "--issue-certificates",
        "edge-operator-ca",
        "--issue-webhook-secret",
        "edge-operator-webhook-serving",
        "--issue-webhook-dns-name",
        "edge-operator-webhook.storage.svc",
        "--issue-webhook-configuration",
        "storage-edge-operator",
        "--certificate-days",
        "90",
        "--certificate-rotation",
        "0",
        "--resync",
        "10m",
      ],
      resources: { limits: { memory: "1Gi" } },
    });
  });

  test("agentImage may be an Output (an image built in the same program): the agent and the operator run it", async () => {
    const built = pulumi.output(Promise.resolve("registry.example.com/pulumi-lvm@sha256:abc"));
    const recorded = await runProgram(() => new LvmSystem("lvm", args({ agentImage: built })));
    expect(find(recorded, DS, "lvm-agent").inputs.spec.template.spec.containers[0].image).toBe(
      "registry.example.com/pulumi-lvm@sha256:abc",
    );
    expect(find(recorded, DEPLOYMENT, "lvm-operator").inputs.spec.template.spec.containers[0].image).toBe(
      "registry.example.com/pulumi-lvm@sha256:abc",
    );
  });

  test("without agentImage: the agent and the operator run the image this version builds (npm run image)", async () => {
    const { version } = JSON.parse(readFileSync(join(__dirname, "../../package.json"), "utf8"));
    const { agentImage: _omitted, ...rest } = args();
    const recorded = await runProgram(() => new LvmSystem("img", rest));
    const image = `localhost/pulumi-lvm:${version}`;
    expect(find(recorded, DS, "img-agent").inputs.spec.template.spec.containers[0].image).toBe(image);
    expect(find(recorded, DEPLOYMENT, "img-operator").inputs.spec.template.spec.containers[0].image).toBe(
      image,
    );
  });

  test("HTTPS by default, issued by the operator: no Secret or key in Pulumi, its Secrets by name in its RBAC, the agents beside it, waiting for theirs", () => {
    expect(recorded.filter((r) => r.type === "kubernetes:core/v1:Secret")).toEqual([]);
    expect(JSON.stringify(recorded.map((r) => r.inputs))).not.toMatch(/BEGIN (CERTIFICATE|PRIVATE KEY)/);
    expect(
      find(recorded, "kubernetes:rbac.authorization.k8s.io/v1:Role", "lvm-operator").inputs.rules,
    ).toEqual(
      expect.arrayContaining([
        { apiGroups: [""], resources: ["secrets"], verbs: ["create"] },
        {
          apiGroups: [""],
          resources: ["secrets"],
          resourceNames: ["lvm-operator-ca", "lvm-agent-serving", "lvm-operator-webhook-serving"],
          verbs: ["get", "update", "patch"],
        },
      ]),
    );
    expect(
      find(recorded, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "lvm-operator").inputs.rules,
    ).toEqual(
      expect.arrayContaining([
        {
          apiGroups: ["admissionregistration.k8s.io"],
          resources: ["validatingwebhookconfigurations"],
          resourceNames: ["lvm-system-lvm-operator"],
          verbs: ["get", "patch"],
        },
      ]),
    );
    // The DaemonSet mounts a Secret the operator creates after it starts: beside the operator, not
    // after its rollout; the agents wait for the Secret (optional volume, --tls-await).
    const ds = find(recorded, DS, "lvm-agent");
    expect(ds.opts.dependsOn).not.toContain(find(recorded, DEPLOYMENT, "lvm-operator").resource);
    expect(ds.inputs.spec.template.spec.volumes).toContainEqual({
      name: "tls",
      secret: { secretName: "lvm-agent-serving", optional: true },
    });
    expect(ds.inputs.spec.template.spec.containers[0].args).toContain("--tls-await");
  });

  test("certificates: validityDays and rotation reach the operator; more than 365 days refused", async () => {
    const rs = await runProgram(
      () => new LvmSystem("rot", args({ certificates: { validityDays: 30, rotation: 3 } })),
    );
    const flags: string[] = find(rs, DEPLOYMENT, "rot-operator").inputs.spec.template.spec.containers[0].args;
    expect(flags.join(" ")).toContain("--certificate-days 30 --certificate-rotation 3");
    const { error } = await runFailingProgram(
      () => new LvmSystem("long", args({ certificates: { validityDays: 3650 } })),
    );
    expect(error.message).toContain("certificates.validityDays");
  });

  test("certificates.issuerRef: cert-manager Certificates for both Secrets, the CA injected, the operator issues nothing", async () => {
    const rs = await runProgram(
      () =>
        new LvmSystem(
          "cm",
          args({
            certificates: { issuerRef: { name: "cluster-ca", kind: "ClusterIssuer" }, validityDays: 90 },
          }),
        ),
    );
    const certs = rs.filter((r) => r.type === "kubernetes:cert-manager.io/v1:Certificate");
    expect(certs.map((c) => [c.inputs.metadata.name, c.inputs.spec.secretName])).toEqual([
      ["cm-operator-webhook", "cm-operator-webhook-serving"],
      ["cm-agent-serving", "cm-agent-serving"],
    ]);
    for (const c of certs)
      expect(c.inputs.spec).toMatchObject({
        duration: "2160h",
        renewBefore: "720h",
        isCA: false,
        privateKey: { rotationPolicy: "Always" },
        issuerRef: { group: "cert-manager.io", kind: "ClusterIssuer", name: "cluster-ca" },
      });
    const flags: string[] = find(rs, DEPLOYMENT, "cm-operator").inputs.spec.template.spec.containers[0].args;
    expect(flags).not.toContain("--issue-certificates");
    const vwc = find(
      rs,
      "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration",
      "cm-operator-webhook",
    );
    expect(vwc.inputs.metadata.annotations).toEqual({
      "cert-manager.io/inject-ca-from": "lvm-system/cm-operator-webhook",
      "pulumi.com/waitFor": "jsonpath={.webhooks[0].clientConfig.caBundle}",
    });
    expect(JSON.stringify(vwc.inputs.webhooks)).not.toContain("caBundle");
    expect(vwc.opts.ignoreChanges).toBeUndefined();
  });

  test("agentPlainHttp: no Secret, agents and operator told plain HTTP; with agentTlsSecretName: refused", async () => {
    const plain = await runProgram(() => new LvmSystem("plain", args({ agentPlainHttp: true })));
    // (the operator's webhook serves HTTPS whatever the agents do: the API server calls webhooks over TLS only)
    const agentSecrets = (rs: typeof plain) => rs.filter((r) => r.type === "kubernetes:core/v1:Secret");
    expect(agentSecrets(plain)).toEqual([]);
    expect(find(plain, DS, "plain-agent").inputs.spec.template.spec.containers[0].args).toContain(
      "--allow-plain-http",
    );
    const op = find(plain, DEPLOYMENT, "plain-operator").inputs.spec.template.spec;
    expect(op.containers[0].args).toContain("--agent-allow-plain-http");
    expect(op.volumes).toEqual([
      { name: "webhook-tls", secret: { secretName: "plain-operator-webhook-serving", optional: true } },
    ]);
    // the operator still issues the webhook's certificate, not the agents'
    expect(op.containers[0].args).not.toContain("--issue-agent-secret");
    expect(op.containers[0].args).toContain("--issue-webhook-secret");
    const mine = await runProgram(() => new LvmSystem("mine", args({ agentTlsSecretName: "cm-tls" })));
    expect(agentSecrets(mine)).toEqual([]);
    expect(
      find(mine, DEPLOYMENT, "mine-operator").inputs.spec.template.spec.volumes[0].secret.secretName,
    ).toBe("cm-tls");
    const { error } = await runFailingProgram(
      () => new LvmSystem("both", args({ agentPlainHttp: true, agentTlsSecretName: "x" })),
    );
    expect(error.message).toContain("agentPlainHttp: excludes agentTlsSecretName");
  });

  test("operator.providerReady: on by default with the RBAC it reads with; false leaves the flag out; not a boolean: refused", async () => {
    const flags = (rs: Awaited<ReturnType<typeof runProgram>>, name: string): string[] =>
      find(rs, DEPLOYMENT, `${name}-operator`).inputs.spec.template.spec.containers[0].args;
    expect(flags(recorded, "lvm")).toContain("--provider-ready");
    // what --provider-ready reads (src/operator/nodeset/provider.ts), granted cluster-wide
    expect(
      find(recorded, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "lvm-operator").inputs.rules,
    ).toEqual(
      expect.arrayContaining([
        { apiGroups: ["storage.k8s.io"], resources: ["csidrivers"], verbs: ["get"] },
        { apiGroups: ["storage.k8s.io"], resources: ["csinodes"], verbs: ["list"] },
      ]),
    );
    const on = await runProgram(() => new LvmSystem("on", args({ operator: { providerReady: true } })));
    expect(flags(on, "on").filter((f) => f === "--provider-ready")).toHaveLength(1);
    const off = await runProgram(() => new LvmSystem("off", args({ operator: { providerReady: false } })));
    expect(flags(off, "off")).not.toContain("--provider-ready");
    const { error } = await runFailingProgram(
      () => new LvmSystem("bad", args({ operator: { providerReady: "yes" as unknown as boolean } })),
    );
    expect(error.message).toContain("operator.providerReady");
  });

  test("without the operator: no operator account, roles or Deployment", async () => {
    const without = await runProgram(
      () => new LvmSystem("bare", args({ operator: { enabled: false }, agentTlsSecretName: "mine" })),
    );
    expect(without.filter((r) => r.name.startsWith("bare-operator"))).toEqual([]);
    // no operator to issue the agents' certificate and no one else named: refused, saying what to give
    const { error } = await runFailingProgram(
      () => new LvmSystem("none", args({ operator: { enabled: false } })),
    );
    expect(error.message).toContain(
      "operator.enabled: false leaves no one to issue the agents' serving certificate",
    );
  });

  test("outputs", async () => {
    let system: LvmSystem | undefined;
    await runProgram(() => (system = new LvmSystem("lvm3", args())));
    expect(await outputOf(system!.namespace)).toBe("lvm-system");
    expect(await outputOf(system!.crdNames)).toEqual([
      "lvmnodes.lvm.topolvm.io",
      "lvmnodesets.lvm.topolvm.io",
    ]);
    expect(await outputOf(system!.agentServiceAccountName)).toBe("lvm3-agent");
    expect(await outputOf(system!.agentDaemonSetName)).toBe("lvm3-agent");
    expect(await outputOf(system!.provisionerServiceAccountName)).toBe("lvm3-provisioner");
    expect(await outputOf(system!.clusterModeRoleName)).toBe("lvm3-cluster-mode");
    expect(await outputOf(system!.clusterModeClusterRoleName)).toBe("lvm3-cluster-mode");
    expect(await outputOf(system!.operatorDeploymentName!)).toBe("lvm3-operator");
    expect(system!.topolvmReleaseName).toBeUndefined();
  });

  describe("TopoLVM", () => {
    test("installs the pinned official chart: one lvmd per node set, with its classes, on its nodes", async () => {
      let system: LvmSystem | undefined;
      const withTopolvm = await runProgram(
        () =>
          (system = new LvmSystem(
            "lvm",
            args({
              topolvm: {
                chartVersion: "15.7.1",
                nodeSets: [south, north],
                values: { "cert-manager": { enabled: true }, lvmd: { env: [{ name: "A", value: "1" }] } },
              },
            }),
          )),
      );
      const chart = find(withTopolvm, CHART, "lvm-topolvm");
      expect(chart.parent).toEqual({ type: LVM_SYSTEM_TYPE, name: "lvm" });
      expect(chart.opts.dependsOn).toEqual([
        find(withTopolvm, "kubernetes:core/v1:Namespace", "lvm-namespace").resource,
      ]);
      const linux = { "kubernetes.io/os": "linux" };
      expect(chart.inputs).toEqual({
        chart: "topolvm",
        version: "15.7.1",
        repositoryOpts: { repo: "https://topolvm.github.io/topolvm" },
        name: "topolvm",
        namespace: "lvm-system",
        values: {
          "cert-manager": { enabled: true },
          crd: { annotations: { "helm.sh/resource-policy": "keep" } },
          lvmd: {
            env: [{ name: "A", value: "1" }],
            managed: true,
            socketName: "/run/topolvm/lvmd.sock",
            // By node set name: "north" is the chart's own lvmd (DaemonSet topolvm-lvmd-0), ...
            deviceClasses: [LVMD_FAST, LVMD_BULK],
            nodeSelector: linux,
            tolerations: [],
            affinity: affinity(byZone("north")),
            // ... "south" the first additional one (topolvm-lvmd-1): only its class, only on its nodes.
            additionalConfigs: [
              {
                deviceClasses: [LVMD_BULK],
                nodeSelector: linux,
                tolerations: [],
                affinity: affinity(byZone("south")),
              },
            ],
          },
          node: {
            lvmdEmbedded: false,
            lvmdSocket: "/run/topolvm/lvmd.sock",
            nodeSelector: linux,
            tolerations: [],
            affinity: affinity({
              nodeSelectorTerms: [...byZone("north").nodeSelectorTerms, ...byZone("south").nodeSelectorTerms],
            }),
          },
          storageClasses: [],
        },
      });
      expect(
        find(withTopolvm, "kubernetes:core/v1:Namespace", "lvm-namespace").inputs.metadata.labels,
      ).toEqual({
        "pod-security.kubernetes.io/enforce": "privileged",
        "topolvm.io/webhook": "ignore",
      });
      expect(await outputOf(system!.topolvmReleaseName!)).toBe("topolvm");
    });

    test("lvmd and topolvm-node follow the agents: their node selector and tolerations", async () => {
      const tolerations = [
        { key: "node-role.kubernetes.io/storage", operator: "Exists", effect: "NoSchedule" },
      ];
      const recorded = await runProgram(
        () =>
          new LvmSystem(
            "lvm",
            args({
              nodeSelector: { "acme.com/storage": "true" },
              tolerations,
              topolvm: { chartVersion: "15.7.1", nodeSets: [{ name: "all", template: south.template }] },
            }),
          ),
      );
      const { lvmd, node } = find(recorded, CHART, "lvm-topolvm").inputs.values;
      expect(lvmd).toMatchObject({
        deviceClasses: [LVMD_BULK],
        nodeSelector: { "acme.com/storage": "true" },
        tolerations,
        affinity: {},
        additionalConfigs: [],
      });
      expect(node).toMatchObject({ nodeSelector: { "acme.com/storage": "true" }, tolerations, affinity: {} });
    });

    test("node sets that may share nodes: a warning naming them, and no lvmd where both select", async () => {
      const warn = jest.spyOn(pulumi.log, "warn").mockImplementation(() => Promise.resolve());
      try {
        const everyNode = { name: "everywhere", template: north.template };
        const recorded = await runProgram(
          () =>
            new LvmSystem("lvm", args({ topolvm: { chartVersion: "15.7.1", nodeSets: [south, everyNode] } })),
        );
        expect(warn.mock.calls.map(([message]) => message)).toEqual([
          'node sets "everywhere" and "south" may select the same nodes; a node both select gets neither\'s volume groups and runs no lvmd',
        ]);
        // Every node of "south" is also one of "everywhere": south's lvmd has no node left.
        expect(find(recorded, CHART, "lvm-topolvm").inputs.values.lvmd).toMatchObject({
          deviceClasses: [LVMD_FAST, LVMD_BULK],
          affinity: affinity({
            nodeSelectorTerms: [
              {
                matchExpressions: [
                  { key: "topology.kubernetes.io/zone", operator: "NotIn", values: ["south"] },
                ],
              },
            ],
          }),
          additionalConfigs: [],
        });
      } finally {
        warn.mockRestore();
      }
    });

    test("release name and repository mirror", async () => {
      const mirrored = await runProgram(
        () =>
          new LvmSystem(
            "lvm",
            args({
              topolvm: {
                chartVersion: "15.7.1",
                nodeSets: [south],
                releaseName: "csi",
                repository: "https://charts.example.com/topolvm",
              },
            }),
          ),
      );
      expect(find(mirrored, CHART, "lvm-topolvm").inputs).toMatchObject({
        name: "csi",
        repositoryOpts: { repo: "https://charts.example.com/topolvm" },
      });
    });

    test("the chart from an OCI mirror or from disk (air-gapped sites); a local chart must be the pinned version", async () => {
      const fromOci = await runProgram(
        () =>
          new LvmSystem(
            "lvm",
            args({
              topolvm: {
                chartVersion: "15.7.1",
                nodeSets: [south],
                repository: "oci://registry.example.com/charts",
              },
            }),
          ),
      );
      const ociInputs = find(fromOci, CHART, "lvm-topolvm").inputs;
      expect(ociInputs).toMatchObject({
        chart: "oci://registry.example.com/charts/topolvm",
        version: "15.7.1",
      });
      expect(ociInputs).not.toHaveProperty("repositoryOpts");

      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lvm-system-chart-"));
      try {
        fs.writeFileSync(path.join(dir, "Chart.yaml"), "apiVersion: v2\nname: topolvm\nversion: 15.7.1\n");
        const fromDisk = await runProgram(
          () =>
            new LvmSystem(
              "lvm",
              args({ topolvm: { chartVersion: "15.7.1", nodeSets: [south], chartPath: dir } }),
            ),
        );
        const diskInputs = find(fromDisk, CHART, "lvm-topolvm").inputs;
        expect(diskInputs).toMatchObject({ chart: dir, name: "topolvm", namespace: "lvm-system" });
        expect(diskInputs).not.toHaveProperty("repositoryOpts");

        const { error, registered } = await runFailingProgram(
          () =>
            new LvmSystem(
              "lvm",
              args({ topolvm: { chartVersion: "17.1.0", nodeSets: [south], chartPath: dir } }),
            ),
        );
        expect(error).toBeInstanceOf(ValidationError);
        expect(error.message).toContain(
          `args.topolvm.chartPath: ${path.join(dir, "Chart.yaml")} is chart version "15.7.1", but chartVersion pins "17.1.0"`,
        );
        expect(registered).toBe(0);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }, 30_000);

    test("what the chart cannot do right is refused with its path, all at once, before anything registers", async () => {
      const big = {
        name: "big",
        nodeSelector: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: "acme.com/disks", operator: "Gt", values: ["4"] }] },
          ],
        },
        template: south.template,
      };
      const { error, registered } = await runFailingProgram(
        () =>
          new LvmSystem(
            "lvm",
            args({
              topolvm: {
                chartVersion: "11.4.0",
                nodeSets: [north, big, { ...south, name: "north" }],
                deviceClasses: [fastClass],
                values: { lvmd: { nodeSelector: { a: "b" } }, node: { lvmdEmbedded: true } },
              } as unknown as LvmSystemArgs["topolvm"],
            }),
          ),
      );
      expect(error).toBeInstanceOf(ValidationError);
      expect(error.message).toBe(
        [
          'LvmSystem "lvm" is invalid:',
          "  args.topolvm.chartVersion: must be 11.5.0 or later: older charts ignore the affinity of each node set's lvmd (lvmd.additionalConfigs[].affinity) and would run every node set's lvmd on every node (got \"11.4.0\")",
          "  args.topolvm.deviceClasses: replaced by nodeSets: each node set's lvmd serves that node set's device classes on its nodes only (pass every NodeSet's name, nodeSelector and template)",
          '  args.topolvm.nodeSets[2].name: duplicate node set name "north" (also nodeSets[0])',
          "  args.topolvm.values.lvmd.nodeSelector: is set by LvmSystem: lvmd runs on the agents' nodes (nodeSelector)",
          "  args.topolvm.values.node.lvmdEmbedded: is set by LvmSystem: lvmd runs as DaemonSets, one per node set, not inside topolvm-node",
          '  args.topolvm.nodeSets[1].nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator: Gt cannot be negated exactly in a node affinity (a node whose "acme.com/disks" label is not an integer matches neither Gt nor Lt), and the lvmd of node set "north" must exclude the nodes node set "big" selects: make the two selectors exclude each other (e.g. In and NotIn on one label)',
        ].join("\n"),
      );
      expect(registered).toBe(0);
    });
  });

  describe("validation", () => {
    test("lists every problem with its args path, and registers nothing", async () => {
      const { error, registered } = await runFailingProgram(
        () =>
          new LvmSystem(
            "lvm",
            args({
              agentImage: "",
              agentPort: 70000,
              tolerations: [{ operator: "exists" }],
              agentResources: { limits: { memory: "lots" } },
              topolvm: {
                chartVersion: "latest",
                nodeSets: [
                  {
                    ...north,
                    template: {
                      // A device selector is the NodeSet's to check; the classes are lvmd's too.
                      volumeGroups: [
                        {
                          name: "vg-data",
                          deviceSelector: {
                            deviceSelectorTerms: [
                              { matchExpressions: [{ key: "serial", operator: "In", values: [] }] },
                            ],
                          },
                        },
                      ],
                      deviceClasses: [{ ...fastClass, thin: { ...fastClass.thin, sizePercent: 120 } }],
                    },
                  },
                ],
              },
            }),
          ),
      );
      expect(error).toBeInstanceOf(ValidationError);
      expect(error.message).toBe(
        [
          'LvmSystem "lvm" is invalid:',
          "  args.agentImage: must not be empty",
          "  args.agentPort: must be at most 65535 (got 70000)",
          '  args.tolerations[0].operator: must be one of "Exists", "Equal" (got "exists")',
          '  args.agentResources.limits.memory: must be a quantity such as "64Mi" or "20m" (got "lots")',
          '  args.topolvm.chartVersion: must be an exact chart version such as "15.7.1" (got "latest")',
          "  args.topolvm.nodeSets[0].template.deviceClasses[0].thin.sizePercent: must be between 1 and 100 (got 120)",
        ].join("\n"),
      );
      expect(registered).toBe(0);
    });

    test("a missing CRD directory fails clearly before anything registers", async () => {
      const { error, registered } = await runFailingProgram(
        () => new LvmSystem("lvm", args({ crdDirectory: "/nonexistent/crds" })),
      );
      expect(error.message).toBe(
        'LvmSystem "lvm" cannot read its CustomResourceDefinitions: /nonexistent/crds does not exist: the CRDs are generated there by `npm run generate` (or pass crdDirectory)',
      );
      expect(registered).toBe(0);
    });

    test("the CRD loader's error is the cause of LvmSystem's, not only its text", () => {
      let error: Error | undefined;
      try {
        new LvmSystem("lvm", args({ crdDirectory: "/nonexistent/crds" }));
      } catch (e) {
        error = e as Error;
      }
      expect(error?.cause).toBeInstanceOf(Error);
      expect((error?.cause as Error).message).toBe(
        "/nonexistent/crds does not exist: the CRDs are generated there by `npm run generate` (or pass crdDirectory)",
      );
    });

    test("an empty CRD directory fails clearly", async () => {
      const empty = tempDir({});
      try {
        const { error } = await runFailingProgram(
          () => new LvmSystem("lvm", args({ crdDirectory: empty.dir })),
        );
        expect(error.message).toBe(
          `LvmSystem "lvm" cannot read its CustomResourceDefinitions: ${empty.dir} holds no CustomResourceDefinition: generate them with \`npm run generate\``,
        );
      } finally {
        empty.remove();
      }
    });

    test("the component name must make valid object names", async () => {
      const { error } = await runFailingProgram(() => new LvmSystem("LVM", args()));
      expect((error as ValidationError).problems).toEqual([
        {
          path: "name",
          message: `prefixes the Kubernetes object names ("LVM-agent"), so must be a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit (got "LVM-provisioner")`,
        },
      ]);
    });
  });
});
