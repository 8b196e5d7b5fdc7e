import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { ValidationError, type ValidationProblem } from "../api";

/**
 * Secret args (an SSH key, an agent token, a kubeconfig) through the component provider
 * (docs/languages.md). A program in another language registers the component with its args, and
 * the engine records those args in the component's state: a plain value there is stored in clear,
 * whatever the component does with it afterwards. So when the component runs in the provider's
 * process, each of these args must arrive as a secret, or it is refused before anything is
 * registered. In a TypeScript program the component runs in the program's process and its args are
 * recorded nowhere (a local ComponentResource registers no inputs); the components wrap them as
 * secrets for their children, so a plain value is accepted there.
 */

/** How to pass a secret in each language, for the refusal's message. */
export const HOW_TO_PASS_A_SECRET =
  "pass it as a secret: Python `pulumi.Output.secret(...)` or `config.require_secret(...)`, " +
  'YAML `fn::secret` (e.g. `token: { "fn::secret": ... }`, or a secret config value), ' +
  "TypeScript `pulumi.secret(...)` or `config.requireSecret(...)`";

const REFUSAL = `is not a secret, and the component's args are recorded in the state as given: ${HOW_TO_PASS_A_SECRET}`;

/**
 * Whether this process is the package served as a component provider: the Node.js language host
 * runs a plugin through @pulumi/pulumi's `cmd/run-plugin` (a program through `cmd/run`), and that
 * is the process's main module.
 */
export function servedByComponentProvider(main: NodeJS.Module | undefined = require.main): boolean {
  if (!main?.filename) return false;
  const parts = main.filename.split(path.sep);
  const cmd = parts.lastIndexOf("cmd");
  return cmd > 0 && parts[cmd + 1] === "run-plugin" && parts[cmd - 1] === "pulumi";
}

/** A secret arg's place in `args`: keys from args, `"*"` for every key of a map (e.g. `["agents", "*", "token"]`). */
export type SecretArgPath = readonly string[];

interface Found {
  readonly path: string;
  readonly value: unknown;
}

/**
 * The values at `paths` in `args`, with their paths from `args` (`args.agents.node-1.token`). A
 * path stops at an Output or Promise on the way (a whole map given as an Output): its value is
 * checked at that point, where it is secret or not as a whole.
 */
function valuesAt(args: unknown, paths: readonly SecretArgPath[]): Found[] {
  const found: Found[] = [];
  const walk = (value: unknown, rest: readonly string[], at: string): void => {
    if (value === undefined || value === null) return;
    if (rest.length === 0 || pulumi.Output.isInstance(value) || value instanceof Promise) {
      found.push({ path: at, value });
      return;
    }
    if (typeof value !== "object" || Array.isArray(value)) return; // the args' own schema refuses it
    const [key, ...more] = rest;
    const keys = key === "*" ? Object.keys(value) : [key!];
    for (const k of keys)
      if (Object.prototype.hasOwnProperty.call(value, k))
        walk((value as Record<string, unknown>)[k], more, `${at}.${k}`);
  };
  for (const p of paths) walk(args, p, "args");
  // One entry per place: a map given as an Output is reached by several paths.
  return found.filter((f, i) => found.findIndex((g) => g.path === f.path) === i);
}

/**
 * The secret args at `paths` given as plain values (not an Output, not a Promise), when the
 * component is served by the component provider (`served`); none in a TypeScript program. The
 * component adds them to its validation problems: refused before anything registers.
 */
export function secretArgProblems(
  args: unknown,
  paths: readonly SecretArgPath[],
  served: boolean = servedByComponentProvider(),
): ValidationProblem[] {
  if (!served) return [];
  return valuesAt(args, paths)
    .filter((f) => !pulumi.Output.isInstance(f.value) && !(f.value instanceof Promise))
    .map((f) => ({ path: f.path, message: REFUSAL }));
}

/** The result of {@link secretArgsGuard}. */
export interface SecretArgsGuard {
  /**
   * `value` once every secret arg given as an Output is known to be a secret; rejected with the
   * ValidationError otherwise. The component passes its secret args and its outputs through it:
   * a refused arg reaches no child, and the component's construction fails at its first output.
   */
  guard<T>(value: pulumi.Input<T>): pulumi.Output<pulumi.Unwrap<T>>;
  /**
   * For a child's input: `value` once the secret args are known to be secrets; never, when one is
   * refused. The child then never registers (the refusal fails the component through `guard`,
   * without a second error from each child). For `registerOutputs`, hold each value, never the
   * map: a map given as one Output reaches the engine as a secret's wrapper in place of the map,
   * and the engine stores the wrapped value in clear.
   */
  hold<T>(value: pulumi.Input<T>): pulumi.Output<pulumi.Unwrap<T>>;
}

const PASS: SecretArgsGuard = {
  guard: (value) => pulumi.output(value),
  hold: (value) => pulumi.output(value),
};

/**
 * The other half of {@link secretArgProblems}: the secret args given as Outputs are secret or not
 * only once they resolve. When served, refuses (through `guard`) those that are not. Nothing is
 * checked in a TypeScript program.
 */
export function secretArgsGuard(
  component: string,
  name: string,
  args: unknown,
  paths: readonly SecretArgPath[],
  served: boolean = servedByComponentProvider(),
): SecretArgsGuard {
  if (!served) return PASS;
  const outputs = valuesAt(args, paths).filter(
    (f) => pulumi.Output.isInstance(f.value) || f.value instanceof Promise,
  );
  if (outputs.length === 0) return PASS;
  const verdict = Promise.all(
    outputs.map(async (f) => ((await pulumi.isSecret(pulumi.output(f.value))) ? [] : [f])),
  ).then((all) => {
    const refused = all.flat();
    if (refused.length > 0)
      throw new ValidationError(
        `${component} "${name}"`,
        refused.map((f) => ({ path: f.path, message: REFUSAL })),
      );
    return true;
  });
  // Rejects as soon as the check does, whatever `value` waits for (a child that never registers).
  const gate = observed(pulumi.output(verdict));
  const held = pulumi.output(verdict.catch(() => new Promise<never>(() => undefined)));
  return {
    guard: <T>(value: pulumi.Input<T>) => observed(pulumi.all([gate, value]).apply(([, v]) => v)),
    hold: <T>(value: pulumi.Input<T>) => pulumi.all([held, value]).apply(([, v]) => v),
  };
}

/**
 * `o`, its rejection observed: an Output's value, known-ness and secret-ness are promises of their
 * own, and those that nobody awaits (the component provider awaits only the value) would each be
 * reported again as an unhandled rejection.
 */
function observed<T>(o: pulumi.Output<T>): pulumi.Output<T> {
  const parts = o as unknown as {
    promise(): Promise<unknown>;
    isKnown: Promise<unknown>;
    isSecret: Promise<unknown>;
    allResources?: () => Promise<unknown>;
  };
  for (const p of [parts.promise(), parts.isKnown, parts.isSecret, parts.allResources?.()])
    p?.catch(() => undefined);
  return o;
}
