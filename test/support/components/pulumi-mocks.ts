import * as pulumi from "@pulumi/pulumi";

/**
 * Test support: runs a Pulumi program against `pulumi.runtime.setMocks` (no CLI, no engine, no
 * cluster) and returns every resource it registered, with the inputs the engine received, its
 * parent and the options it was given. The mocks return a resource's inputs as its state, the way
 * the Kubernetes provider echoes a manifest.
 */

export interface Recorded {
  readonly type: string;
  readonly name: string;
  /** The inputs the engine received, Outputs resolved (secrets unwrapped). */
  readonly inputs: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** Type and name of the parent; undefined for children of the stack. */
  readonly parent?: { readonly type: string; readonly name: string };
  readonly opts: pulumi.ResourceOptions & pulumi.CustomResourceOptions;
  /** The resource object (to compare with dependsOn). */
  readonly resource: pulumi.Resource;
  /** The props the program passed, Outputs not resolved (to check secretness). */
  readonly props: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

interface Registration {
  readonly type: string;
  readonly name: string;
  readonly inputs: Record<string, unknown>;
}

let registrations: Registration[] = [];

/**
 * What a provider adds to a resource's state besides its inputs (e.g. a command's stdout); the
 * mocks merge it over the inputs. Return undefined for resources that only echo their inputs.
 */
export type MockOutputs = (
  type: string,
  name: string,
  inputs: Record<string, unknown>,
) => Record<string, unknown> | undefined;

/** Installs the mocks; call once per test file (beforeAll). No parameter: `beforeAll(installMocks)` must not look like a done-callback hook. */
export async function installMocks(): Promise<void> {
  await installMocksWithOutputs(undefined);
}

/** Installs the mocks with what providers add to the state (see MockOutputs). */
export async function installMocksWithOutputs(outputs: MockOutputs | undefined): Promise<void> {
  await pulumi.runtime.setMocks(
    {
      newResource(args) {
        registrations.push({ type: args.type, name: args.name, inputs: args.inputs });
        const added = outputs?.(args.type, args.name, args.inputs);
        return { id: `${args.name}-id`, state: { ...args.inputs, ...added } };
      },
      call(args) {
        return args.inputs;
      },
    },
    "project",
    "stack",
    false,
  );
}

/** Runs `program` as a stack and returns what it registered, in registration order of construction. */
export async function runProgram(program: () => unknown): Promise<Recorded[]> {
  registrations = [];
  const seen: Array<{
    type: string;
    name: string;
    resource: pulumi.Resource;
    opts: pulumi.ResourceOptions;
    props: Record<string, unknown>;
  }> = [];
  const identity = new Map<pulumi.Resource, { type: string; name: string }>();
  await pulumi.runtime.runInPulumiStack(async () => {
    // The legacy SDK-side transformation sees every resource with its options; the mock engine does
    // not support engine-side transforms.
    pulumi.runtime.registerStackTransformation((args) => {
      seen.push({
        type: args.type,
        name: args.name,
        resource: args.resource,
        opts: args.opts,
        props: args.props,
      });
      identity.set(args.resource, { type: args.type, name: args.name });
      return undefined;
    });
    await program();
  });
  await Promise.all(seen.map((s) => new Promise((resolve) => s.resource.urn.apply(resolve))));
  return seen.map((s) => {
    const matches = registrations.filter((r) => r.type === s.type && r.name === s.name);
    if (matches.length !== 1)
      throw new Error(`expected one registration of ${s.type} "${s.name}", found ${matches.length}`);
    const parent = s.opts.parent ? identity.get(s.opts.parent) : undefined;
    return {
      type: s.type,
      name: s.name,
      inputs: matches[0]!.inputs,
      opts: s.opts,
      props: s.props,
      resource: s.resource,
      ...(parent ? { parent } : {}),
    };
  });
}

/**
 * Runs a Pulumi program directory (its index.ts) as a stack: a program runs when its module is
 * loaded. Returns what it registered and its exports (the stack outputs).
 */
export async function runProgramDirectory(
  dir: string,
): Promise<{ recorded: Recorded[]; exports: Record<string, unknown> }> {
  let exports: Record<string, unknown> = {};
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loading the module is running the program
  const recorded = await runProgram(() => (exports = require(dir)));
  return { recorded, exports };
}

/**
 * Runs `program`, which must throw while constructing (components validate before they register
 * anything); returns the error and how many resources reached the engine.
 */
export async function runFailingProgram(
  program: () => unknown,
): Promise<{ error: Error; registered: number }> {
  registrations = [];
  let error: Error | undefined;
  try {
    program();
  } catch (e) {
    error = e as Error;
  }
  await new Promise((resolve) => setTimeout(resolve, 50)); // let any registration that was started arrive
  if (!error) throw new Error("expected the program to throw, but it completed");
  return { error, registered: registrations.length };
}

/** The one recorded resource of `type` named `name`; throws listing what exists otherwise. */
export function find(recorded: readonly Recorded[], type: string, name: string): Recorded {
  const hit = recorded.find((r) => r.type === type && r.name === name);
  if (!hit)
    throw new Error(
      `no ${type} "${name}"; have:\n${recorded.map((r) => `  ${r.type} ${r.name}`).join("\n")}`,
    );
  return hit;
}

/** All recorded resources of `type`. */
export function ofType(recorded: readonly Recorded[], type: string): Recorded[] {
  return recorded.filter((r) => r.type === type);
}
