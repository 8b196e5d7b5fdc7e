import YAML from "yaml";
import type { Flag, FlagValues } from "./args";

/** The output formats of the read commands (`-o`); `--json` is `-o json`. */
export const OUTPUT_FORMATS = ["text", "wide", "json", "yaml"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The flags every read command takes for its output. */
export const OUTPUT_FLAGS: Readonly<Record<string, Flag>> = {
  output: { type: "string", short: "o", value: "format" },
  json: { type: "boolean" },
};

/**
 * The format `-o`/`--output` and `--json` ask for, or a usage error: an unknown format, or `--json`
 * with another one.
 */
export function outputFormat(
  values: FlagValues,
  fallback: OutputFormat,
  allowed: readonly OutputFormat[] = OUTPUT_FORMATS,
): { format: OutputFormat } | { error: string } {
  const { output, json } = values as { output?: string; json?: boolean };
  if (output !== undefined && !(allowed as readonly string[]).includes(output))
    return { error: `-o ${output}: must be one of ${allowed.join(", ")}` };
  if (json && output !== undefined && output !== "json")
    return { error: `--json is -o json: give one of --json and -o ${output}` };
  return { format: json ? "json" : ((output as OutputFormat | undefined) ?? fallback) };
}

/**
 * A document as YAML, written the same way each time: no line folding (a long reason stays on one
 * line, so a diff of two runs shows what changed), no anchors for repeated objects.
 */
export function toYaml(value: unknown): string {
  return YAML.stringify(value, { lineWidth: 0, aliasDuplicateObjects: false });
}

/** Rows as columns separated by two spaces, each as wide as its longest cell; the last one is not padded. */
export function columns(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((r) => (r[c] ?? "").length)));
  return all
    .map((r) =>
      r
        .map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!)))
        .join("  ")
        .trimEnd(),
    )
    .map((l) => `${l}\n`)
    .join("");
}
