import { checkLVMNodeSetSpec, type LVMNodeSetSpec, type ValidationProblem } from "../api";
import type { TopolvmSettings } from "./topolvm-args";
import { isPlainObject } from "./validate-args";

/*
 * A NodeSet given `{ system }` must match the LvmSystem's topolvm.nodeSets entry it is served by, from
 * which TopoLVM's lvmd is configured (docs/components.md): what the system recorded, and the check.
 */

/** An LvmSystem's topolvm.nodeSets as a NodeSet given `{ system }` is checked against them. */
export interface ServedNodeSets {
  /** The LvmSystem's component name. @example "lvm" */
  readonly system: string;
  /** In the order of topolvm.nodeSets, each spec validated as its NodeSet validates it (as given when invalid). */
  readonly nodeSets: ReadonlyArray<{
    readonly name: string;
    readonly spec: Readonly<Record<string, unknown>>;
  }>;
}

const servedBySystem = new WeakMap<object, ServedNodeSets>();

/** Records the node sets an LvmSystem's TopoLVM serves, for NodeSets that name it as their system. */
export function rememberServedNodeSets(system: object, name: string, topolvm: TopolvmSettings): void {
  servedBySystem.set(system, {
    system: name,
    nodeSets: topolvm.nodeSets.map((set) => {
      const spec = {
        ...(set.nodeSelector !== undefined ? { nodeSelector: set.nodeSelector } : {}),
        template: set.template,
      };
      const checked = checkLVMNodeSetSpec(spec);
      return { name: set.name, spec: checked.ok ? { ...checked.value } : spec };
    }),
  });
}

/** The node sets this LvmSystem's TopoLVM serves; undefined when it installs no TopoLVM. */
export function servedNodeSetsOf(system: object): ServedNodeSets | undefined {
  return servedBySystem.get(system);
}

/**
 * How this node set (its validated spec) disagrees with its LvmSystem's topolvm.nodeSets, from which
 * TopoLVM's lvmd is configured: not listed, or listed with another nodeSelector or template. Each
 * difference is one problem at its path under `args`, naming the LvmSystem's path.
 */
export function servedProblems(
  served: ServedNodeSets,
  nodeSetName: string,
  givenName: string | undefined,
  spec: LVMNodeSetSpec,
): ValidationProblem[] {
  const system = `LvmSystem "${served.system}"`;
  const index = served.nodeSets.findIndex((set) => set.name === nodeSetName);
  if (index < 0) {
    const name =
      givenName === undefined
        ? `${JSON.stringify(nodeSetName)} (the component name)`
        : JSON.stringify(nodeSetName);
    return [
      {
        path: "args.nodeSetName",
        message: `is ${name}, which ${system} does not list in args.topolvm.nodeSets (it lists ${served.nodeSets.map((s) => JSON.stringify(s.name)).join(", ")}): TopoLVM would run no lvmd with its device classes; add { name: ${JSON.stringify(nodeSetName)}, nodeSelector, template } there, with this node set's values`,
      },
    ];
  }
  const theirs = served.nodeSets[index]!.spec;
  const ours: Record<string, unknown> = { ...spec };
  return ["nodeSelector", "template"].flatMap((field) =>
    differences(ours[field], theirs[field], field).map(({ at, here, there }) => ({
      path: `args.${at}`,
      message: `${here === undefined ? "is not set" : `is ${shown(here)}`}, but ${system} has ${there === undefined ? "none" : shown(there)} at args.topolvm.nodeSets[${index}].${at}, from which TopoLVM's lvmd is configured: give both the same value`,
    })),
  );
}

interface Difference {
  readonly at: string;
  readonly here: unknown;
  readonly there: unknown;
}

/** Where two plain values differ: objects key by key, arrays entry by entry, anything else as a whole. */
function differences(here: unknown, there: unknown, at: string): Difference[] {
  if (Array.isArray(here) && Array.isArray(there)) {
    return Array.from({ length: Math.max(here.length, there.length) }, (_, i) =>
      differences(here[i], there[i], `${at}[${i}]`),
    ).flat();
  }
  if (isPlainObject(here) && isPlainObject(there)) {
    const keys = [...new Set([...Object.keys(here), ...Object.keys(there)])];
    return keys.flatMap((key) => differences(here[key], there[key], `${at}.${key}`));
  }
  return Object.is(here, there) ? [] : [{ at, here, there }];
}

/** A value for a message: its JSON; a long entry with a name by its name, anything very long by its kind. */
function shown(value: unknown): string {
  const json = JSON.stringify(value);
  if (json.length > 80 && isPlainObject(value) && typeof value.name === "string")
    return `{"name":${JSON.stringify(value.name)}, ...}`;
  if (json.length <= 200) return json;
  return Array.isArray(value) ? `[${value.length} entries]` : "{...}";
}
