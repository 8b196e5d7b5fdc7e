import YAML from "yaml";

/**
 * The documents of a multi-document YAML manifest, as `validate` and `plan` both read them: YAML
 * errors and alias bombs (the yaml library refuses excessive alias expansion with a ReferenceError)
 * become problem lines naming the file and document instead of a stack trace, and a `kind: List`
 * (what `kubectl get -o yaml` prints) stands for its items.
 */
export interface ManifestDocument {
  /** "<file>: document 2" or, for an item of a List, "<file>: document 2, items[0]". */
  readonly where: string;
  readonly value: unknown;
}

export function readManifestDocuments(
  file: string,
  text: string,
): { documents: ManifestDocument[]; problems: string[] } {
  const documents: ManifestDocument[] = [];
  const problems: string[] = [];
  YAML.parseAllDocuments(text).forEach((doc, index) => {
    const where = `${file}: document ${index + 1}`;
    if (doc.errors.length) {
      for (const e of doc.errors) problems.push(`${file}: ${firstLine(e.message)}`);
      return;
    }
    let value: unknown;
    try {
      value = doc.toJS();
    } catch (error) {
      problems.push(`${where}: ${error instanceof Error ? firstLine(error.message) : String(error)}`);
      return;
    }
    if (value === null || value === undefined) return; // an empty document, e.g. after a trailing ---
    const items = listItems(value);
    if (items) items.forEach((item, i) => documents.push({ where: `${where}, items[${i}]`, value: item }));
    else documents.push({ where, value });
  });
  return { documents, problems };
}

/**
 * "<where>: LVMNodeSet/<name>: metadata.name: also defined by <first where>" for every LVMNodeSet
 * whose name an earlier document already used; `seen` carries names across files.
 */
export function duplicateNodeSetNames(
  documents: readonly ManifestDocument[],
  seen: Map<string, string> = new Map(),
): string[] {
  const problems: string[] = [];
  for (const { where, value } of documents) {
    const v = value as { kind?: unknown; metadata?: { name?: unknown } } | null;
    if (v?.kind !== "LVMNodeSet" || typeof v.metadata?.name !== "string" || !v.metadata.name) continue;
    const first = seen.get(v.metadata.name);
    if (first === undefined) seen.set(v.metadata.name, where);
    else problems.push(`${where}: LVMNodeSet/${v.metadata.name}: metadata.name: also defined by ${first}`);
  }
  return problems;
}

function listItems(value: unknown): unknown[] | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const { kind, items } = value as { kind?: unknown; items?: unknown };
  return kind === "List" && Array.isArray(items) ? items : undefined;
}

function firstLine(message: string): string {
  return message.split("\n")[0]!.replace(/:$/, "");
}
