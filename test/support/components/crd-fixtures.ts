import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** A minimal v1 CRD document of our group, as YAML. */
export function crdYaml(plural: string, kind: string): string {
  return [
    "apiVersion: apiextensions.k8s.io/v1",
    "kind: CustomResourceDefinition",
    "metadata:",
    `  name: ${plural}.lvm.topolvm.io`,
    "spec:",
    "  group: lvm.topolvm.io",
    `  names: { kind: ${kind}, plural: ${plural}, singular: ${kind.toLowerCase()}, listKind: ${kind}List }`,
    "  scope: Namespaced",
    "  versions:",
    "    - name: v2alpha1",
    "      served: true",
    "      storage: true",
    "      schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } }",
    "",
  ].join("\n");
}

/** A temporary directory holding `files` (name → content); removed by the returned function. */
export function tempDir(files: Record<string, string>): { dir: string; remove: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-lvm-crds-"));
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), content);
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** A directory with the LVMNodeSet and LVMNode CRDs, one file each. */
export function crdDirectory(): { dir: string; remove: () => void } {
  return tempDir({
    "lvm.topolvm.io_lvmnodesets.yaml": crdYaml("lvmnodesets", "LVMNodeSet"),
    "lvm.topolvm.io_lvmnodes.yaml": crdYaml("lvmnodes", "LVMNode"),
  });
}
