import { parseArgs } from "node:util";

/** One flag of a subcommand. */
export interface Flag {
  readonly type: "string" | "boolean";
  /** One letter, e.g. "v" for -v. */
  readonly short?: string;
  /** May be given more than once (the values in order). */
  readonly multiple?: boolean;
  /** What the value is, for "--x needs a <value>". @default "value" */
  readonly value?: string;
}

export type FlagValues = Readonly<Record<string, string | boolean | Array<string | boolean> | undefined>>;

export type CommandLine =
  | { readonly kind: "run"; readonly values: FlagValues; readonly positionals: readonly string[] }
  | { readonly kind: "help" }
  | { readonly kind: "error"; readonly message: string };

/**
 * A subcommand's arguments through node:util parseArgs (`--flag value`, `--flag=value`, short
 * flags, `--` ending the flags), with one set of messages for every subcommand: `unknown argument
 * "--x"`, `--x needs a <value>` (missing, empty, or a flag where its value should be), `--x takes
 * no value`, `unexpected argument "y"`. `--help`/`-h` anywhere among the flags asks for the usage.
 */
export function parseCommandLine(
  argv: readonly string[],
  flags: Readonly<Record<string, Flag>>,
  options: { readonly positionals?: boolean } = {},
): CommandLine {
  const all: Record<string, Flag> = { ...flags, help: { type: "boolean", short: "h" } };
  const { values, positionals, tokens } = parseArgs({
    args: [...argv],
    options: Object.fromEntries(
      Object.entries(all).map(([name, f]) => [
        name,
        { type: f.type, ...(f.short ? { short: f.short } : {}), ...(f.multiple ? { multiple: true } : {}) },
      ]),
    ),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  if (tokens.some((t) => t.kind === "option" && t.name === "help")) return { kind: "help" };
  for (const t of tokens) {
    if (t.kind === "positional" && !options.positionals)
      return { kind: "error", message: `unexpected argument "${t.value}"` };
    if (t.kind !== "option") continue;
    const flag = Object.hasOwn(all, t.name) ? all[t.name] : undefined;
    if (!flag) return { kind: "error", message: `unknown argument "${t.rawName}"` };
    if (flag.type === "boolean" && t.value !== undefined)
      return { kind: "error", message: `${t.rawName} takes no value` };
    // As parseArgs' strict mode: "--node --label x" is a missing value, not a node named "--label".
    if (
      flag.type === "string" &&
      (!t.value || (!t.inlineValue && t.value.startsWith("-") && t.value !== "-"))
    )
      return { kind: "error", message: `${t.rawName} needs a ${flag.value ?? "value"}` };
  }
  return { kind: "run", values, positionals };
}
