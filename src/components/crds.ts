import * as fs from "node:fs";
import * as path from "node:path";
import YAML from "yaml";

/** A CustomResourceDefinition as read from deploy/crds. */
export interface CrdManifest {
  readonly apiVersion: "apiextensions.k8s.io/v1";
  readonly kind: "CustomResourceDefinition";
  readonly metadata: { readonly name: string } & Record<string, unknown>;
  readonly spec: Record<string, unknown>;
}

/** The filesystem calls the loader makes; tests and callers may pass their own. */
export interface CrdFs {
  existsSync(p: string): boolean;
  readdirSync(p: string): string[];
  readFileSync(p: string, encoding: "utf8"): string;
}

/**
 * Reads every CustomResourceDefinition from the `*.yaml`/`*.yml` files of `dir` (sorted by file
 * name, all documents of each file). Throws an Error that names the directory, the file and the
 * document when the directory is missing or empty, a document is not a v1 CRD, or a name repeats.
 */
export function loadCrdManifests(dir: string, files: CrdFs = fs): CrdManifest[] {
  if (!files.existsSync(dir))
    throw new Error(
      `${dir} does not exist: the CRDs are generated there by \`npm run generate\` (or pass crdDirectory)`,
    );
  const names = files
    .readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort();
  const crds: CrdManifest[] = [];
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const file of names) {
    const where = path.join(dir, file);
    YAML.parseAllDocuments(files.readFileSync(where, "utf8")).forEach((doc, i) => {
      const at = `${where} (document ${i + 1})`;
      if (doc.errors.length) return problems.push(`${at}: invalid YAML: ${doc.errors[0]!.message}`);
      const obj = doc.toJSON() as Partial<CrdManifest> | null;
      if (obj === null) return; // an empty document, e.g. after a trailing "---"
      if (obj.apiVersion !== "apiextensions.k8s.io/v1" || obj.kind !== "CustomResourceDefinition")
        return problems.push(
          `${at}: not an apiextensions.k8s.io/v1 CustomResourceDefinition (got ${obj.apiVersion}/${obj.kind})`,
        );
      const name = obj.metadata?.name;
      if (typeof name !== "string" || !name) return problems.push(`${at}: metadata.name is missing`);
      if (seen.has(name)) return problems.push(`${at}: ${name} is also defined in ${seen.get(name)}`);
      seen.set(name, at);
      crds.push(obj as CrdManifest);
    });
  }
  if (problems.length) throw new Error(`invalid CRD files:\n  ${problems.join("\n  ")}`);
  if (crds.length === 0)
    throw new Error(`${dir} holds no CustomResourceDefinition: generate them with \`npm run generate\``);
  return crds;
}

/**
 * deploy/crds of this package: found by walking up from this file to the package root, which is
 * one level above src/ when run from source and two above dist/src/ when compiled.
 */
export function defaultCrdDirectory(
  from: string = __dirname,
  files: Pick<CrdFs, "existsSync" | "readFileSync"> = fs,
): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const pkg = path.join(dir, "package.json");
    if (
      files.existsSync(pkg) &&
      (JSON.parse(files.readFileSync(pkg, "utf8")) as { name?: string }).name === PACKAGE_NAME
    )
      return path.join(dir, "deploy", "crds");
    if (path.dirname(dir) === dir)
      throw new Error(`cannot find the ${PACKAGE_NAME} package root above ${from}; pass crdDirectory`);
  }
}

export const PACKAGE_NAME = "pulumi-lvm";
