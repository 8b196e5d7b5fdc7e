import type { DeviceClass, LVMNodeSpec } from "../api";
import type { CompiledRequirements } from "./device-selector";
import { canonicalJsonOnce } from "./hash";
import { lvmdConfigFor, renderLvmdYaml } from "./lvmd";
import type { LvmdConfig } from "./types";

/**
 * What planning a node derives from its spec alone, worked out once per spec object and shared by
 * every node planned with it: planNodes makes one spec object per call (nodeSpecOf) for a whole
 * fleet, so a 5,000-node plan compiles its selectors and renders its lvmd.yaml a handful of times
 * instead of 5,000. As canonicalJsonOnce (hash.ts) already assumes, a spec is not changed after it
 * has been planned with; a changed spec is a new object.
 */
export interface SpecContext {
  /** The names of the spec's volume groups, in spec order. */
  readonly volumeGroupNames: readonly string[];
  /** Device selector tests that do not depend on the node (device-selector.ts). */
  readonly compiled: CompiledRequirements;
  /** The spec's device classes on a volume group, Thick and Thin apart, in spec order. */
  classesOf(vg: string): { readonly thick: readonly DeviceClass[]; readonly thin: readonly DeviceClass[] };
  /** lvmdConfigFor the spec with the ready classes, with its canonical JSON and YAML (computed once per set). */
  lvmdFor(ready: ReadonlySet<string>): LvmdOutput;
}

export interface LvmdOutput {
  /** Shared by every node whose ready classes are the same: frozen. */
  readonly config: LvmdConfig;
  readonly canonical: string;
  readonly yaml: string;
}

const contexts = new WeakMap<LVMNodeSpec, SpecContext>();

export function specContext(spec: LVMNodeSpec): SpecContext {
  let context = contexts.get(spec);
  if (!context) contexts.set(spec, (context = makeContext(spec)));
  return context;
}

const NO_CLASSES = { thick: [], thin: [] } as const;

function makeContext(spec: LVMNodeSpec): SpecContext {
  const classes = new Map<string, { thick: DeviceClass[]; thin: DeviceClass[] }>();
  for (const dc of spec.deviceClasses ?? []) {
    let entry = classes.get(dc.volumeGroup);
    if (!entry) classes.set(dc.volumeGroup, (entry = { thick: [], thin: [] }));
    (dc.strategy === "Thin" ? entry.thin : entry.thick).push(dc);
  }
  const lvmd = new Map<string, LvmdOutput>();
  return {
    volumeGroupNames: spec.volumeGroups.map((vg) => vg.name),
    compiled: new Map(),
    classesOf: (vg) => classes.get(vg) ?? NO_CLASSES,
    lvmdFor(ready) {
      // The key: which of the spec's classes are ready, in spec order.
      let key = "";
      for (const dc of spec.deviceClasses ?? []) key += ready.has(dc.name) ? "1" : "0";
      let out = lvmd.get(key);
      if (!out) {
        const config = deepFreeze(lvmdConfigFor(spec, (dc) => ready.has(dc.name)));
        out = { config, canonical: canonicalJsonOnce(config), yaml: renderLvmdYaml(config) };
        lvmd.set(key, out);
      }
      return out;
    },
  };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
