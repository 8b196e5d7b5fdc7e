import type { KubeManifest } from "../components/system-manifests";
import { toYaml } from "./output";

/*
 * How `pulumi-lvm manifests` writes the system's objects: in the order they can be applied in
 * (kinds others depend on first), each kind by namespace and name, so that two runs over the same
 * input give the same bytes and a GitOps diff shows only what changed.
 */

/** Kinds in apply order: the namespace and the CRDs before what lives in them, workloads after their access. */
const KIND_ORDER = [
  "Namespace",
  "CustomResourceDefinition",
  "ServiceAccount",
  "ClusterRole",
  "Role",
  "ClusterRoleBinding",
  "RoleBinding",
  "Service",
  "Certificate",
  "Deployment",
  "DaemonSet",
  "PodDisruptionBudget",
  "NetworkPolicy",
  "ValidatingWebhookConfiguration",
  "ValidatingAdmissionPolicy",
  "ValidatingAdmissionPolicyBinding",
  "ServiceMonitor",
  "PrometheusRule",
];

/** A kind's place in KIND_ORDER; kinds not listed come last. */
function rank(kind: string): number {
  const i = KIND_ORDER.indexOf(kind);
  return i < 0 ? KIND_ORDER.length : i;
}

/** The objects in apply order: by kind (KIND_ORDER, then by name of kind), namespace, name. */
export function sortManifests(objects: readonly KubeManifest[]): KubeManifest[] {
  const key = (o: KubeManifest) =>
    [rank(o.kind), o.kind, o.metadata.namespace ?? "", o.metadata.name] as const;
  return [...objects].sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
    return 0;
  });
}

/** The comment every output starts with: what it is, what it leaves out, and why the caBundle is absent. */
export function manifestsHeader(version: string, system: string): string {
  return [
    `# pulumi-lvm ${version}: the objects LvmSystem "${system}" deploys, rendered by \`pulumi-lvm manifests\`.`,
    "# Apply them with `kubectl apply --server-side`, or commit them for Argo CD or Flux (docs/cli.md#manifests).",
    "# Not included: TopoLVM, the CSI driver: install it from its own Helm chart (https://topolvm.github.io/topolvm).",
    "# The admission webhook's caBundle is left out on purpose: the operator sets it (server-side apply,",
    "# field manager pulumi-lvm-operator), or cert-manager's CA injector with certificates.issuerRef.",
    "",
  ].join("\n");
}

/** One multi-document YAML stream: the header, then every object in apply order. */
export function manifestsStream(header: string, objects: readonly KubeManifest[]): string {
  return (
    header +
    sortManifests(objects)
      .map((o) => `---\n${toYaml(o)}`)
      .join("")
  );
}

/**
 * One file per object, named `<rank>-<kind>-<name>.yaml` so that `kubectl apply -f DIR` (which goes
 * by file name) applies them in order; each starts with the header.
 */
export function manifestFiles(
  header: string,
  objects: readonly KubeManifest[],
): Array<{ name: string; text: string }> {
  return sortManifests(objects).map((o) => ({
    name: `${String(rank(o.kind)).padStart(2, "0")}-${o.kind.toLowerCase()}-${o.metadata.name}.yaml`,
    text: `${header}${toYaml(o)}`,
  }));
}
