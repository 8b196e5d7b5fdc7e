import type { VolumeGroup } from "../api";
import { parseQuantity } from "../api";
import type { BlockDevice } from "../inventory/types";
import type { NodeIndex } from "./node-index";

export type DeviceSelector = VolumeGroup["deviceSelector"];
export type DeviceRequirement = DeviceSelector["deviceSelectorTerms"][number]["matchExpressions"][number];

/** A selector value naming a device that is not on the node (In on kname, path or symlink). */
export interface NotFoundValue {
  /** The value as written, e.g. "/dev/mapper/some-encrypted-device". */
  readonly value: string;
  /** Knames of the devices the same expression's other values name: the alternatives to it. */
  readonly alternatives: readonly string[];
}

export interface SelectorMatch {
  /** Knames of the devices the selector selects. */
  readonly matched: ReadonlySet<string>;
  readonly notFound: readonly NotFoundValue[];
}

/**
 * Evaluates a device selector on a node (docs/device-selection.md): terms are ORed, the expressions
 * of a term ANDed. Values of kname, path and symlink name a device ("sdb", "/dev/sdb",
 * "/dev/disk/by-id/…", "/dev/mapper/…", see resolveDeviceName) and are resolved before matching, so
 * the three keys are interchangeable for In and NotIn. `Any` matches every device.
 */
export function matchDeviceSelector(
  selector: DeviceSelector,
  index: NodeIndex,
  recordedNames: ReadonlyMap<string, readonly BlockDevice[]> = new Map(),
  compiled: CompiledRequirements = new Map(),
): SelectorMatch {
  const notFound = new Map<string, Set<string>>();
  const terms = selector.deviceSelectorTerms.map((term) =>
    term.matchExpressions.map((r) => compileRequirement(r, index, recordedNames, notFound, compiled)),
  );
  const matched = new Set<string>();
  for (const d of index.devices) if (anyTermMatches(terms, d)) matched.add(d.kname);
  return {
    matched,
    notFound: notFound.size
      ? [...notFound].map(([value, alternatives]) => ({ value, alternatives: [...alternatives] }))
      : NO_VALUES,
  };
}

const NO_VALUES: readonly NotFoundValue[] = [];

/** Terms are ORed, the tests of a term ANDed (loops: this runs for every device of every node). */
function anyTermMatches(terms: readonly (readonly Test[])[], d: BlockDevice): boolean {
  for (let t = 0; t < terms.length; t++) {
    const tests = terms[t]!;
    let all = true;
    for (let i = 0; i < tests.length && all; i++) all = tests[i]!(d);
    if (all) return true;
  }
  return false;
}

/**
 * The devices a kname/path/symlink value names. "sdb" means "/dev/sdb", else "/dev/mapper/sdb"; a
 * path is looked up among every device's kname, path and udev symlinks. A kernel name that a member of
 * one of our volume groups joined under (its PV tag) names that member, wherever it is now.
 */
export function resolveDeviceName(
  value: string,
  index: NodeIndex,
  recordedNames: ReadonlyMap<string, readonly BlockDevice[]> = new Map(),
): readonly BlockDevice[] {
  const candidates = value.startsWith("/") ? [value] : [`/dev/${value}`, `/dev/mapper/${value}`];
  for (const c of candidates) {
    const members = recordedNames.get(c);
    if (members?.length) return members;
    const device = index.byName.get(c);
    if (device) return [device];
  }
  return [];
}

export type Test = (d: BlockDevice) => boolean;

/**
 * Tests of requirements that do not depend on the node (all but In/NotIn on kname, path, symlink),
 * compiled once and kept by whoever plans many nodes for one spec (spec-context.ts).
 */
export type CompiledRequirements = Map<DeviceRequirement, Test>;

function compileRequirement(
  r: DeviceRequirement,
  index: NodeIndex,
  recordedNames: ReadonlyMap<string, readonly BlockDevice[]>,
  notFound: Map<string, Set<string>>,
  compiled: CompiledRequirements,
): Test {
  if ((r.operator === "In" || r.operator === "NotIn") && NAME_KEYS.has(r.key))
    return compileNodeRequirement(r, index, recordedNames, notFound);
  let test = compiled.get(r);
  if (!test) compiled.set(r, (test = compileNodeRequirement(r, index, recordedNames, notFound)));
  return test;
}

/** Keys whose In/NotIn values name devices, resolved on each node. */
const NAME_KEYS = new Set<string>(["kname", "path", "symlink"]);

function compileNodeRequirement(
  r: DeviceRequirement,
  index: NodeIndex,
  recordedNames: ReadonlyMap<string, readonly BlockDevice[]>,
  notFound: Map<string, Set<string>>,
): Test {
  const values = r.values ?? [];
  switch (r.operator) {
    case "Any":
      return () => true;
    case "Exists":
      return (d) => exists(d, r.key);
    case "DoesNotExist":
      return (d) => !exists(d, r.key);
    case "GreaterThan":
    case "LessThan": {
      const limit = numeric(r.key, values[0] ?? "");
      if (limit === undefined) return () => false;
      return (d) => {
        const v = numericAttribute(d, r.key);
        return v !== undefined && (r.operator === "GreaterThan" ? v > limit : v < limit);
      };
    }
    case "In":
    case "NotIn": {
      const isIn = inTest(r, values, index, recordedNames, notFound);
      return r.operator === "In" ? isIn : (d) => !isIn(d);
    }
  }
}

function inTest(
  r: DeviceRequirement,
  values: readonly string[],
  index: NodeIndex,
  recordedNames: ReadonlyMap<string, readonly BlockDevice[]>,
  notFound: Map<string, Set<string>>,
): Test {
  switch (r.key) {
    case "kname":
    case "path":
    case "symlink": {
      const resolved = values.map((v) => resolveDeviceName(v, index, recordedNames));
      const knames = new Set(resolved.flat().map((d) => d.kname));
      if (r.operator === "In")
        values.forEach((value, i) => {
          if (resolved[i]!.length > 0) return;
          const alternatives = notFound.get(value) ?? new Set<string>();
          for (const k of knames) alternatives.add(k);
          notFound.set(value, alternatives);
        });
      return (d) => knames.has(d.kname);
    }
    case "size": {
      const sizes = new Set(values.map((v) => numeric("size", v)));
      return (d) => sizes.has(d.size);
    }
    case "rotational": {
      const wanted = new Set(values.map((v) => v === "true" || v === "1"));
      return (d) => d.rotational !== undefined && wanted.has(d.rotational);
    }
    case "wwn": {
      const wanted = new Set(values.map((v) => v.trim().toLowerCase()));
      return (d) => d.wwn !== undefined && wanted.has(d.wwn.trim().toLowerCase());
    }
    default: {
      const key = r.key;
      const wanted = new Set(values.map((v) => v.trim()));
      return (d) => {
        const v = textAttribute(d, key);
        return v !== undefined && wanted.has(v);
      };
    }
  }
}

function exists(d: BlockDevice, key: DeviceRequirement["key"]): boolean {
  switch (key) {
    case "kname":
    case "path":
    case "size":
      return true;
    case "symlink":
      return d.symlinks.length > 0;
    case "rotational":
      return d.rotational !== undefined;
    default:
      return textAttribute(d, key) !== undefined;
  }
}

/** A text attribute, trimmed; undefined when unknown or empty. */
function textAttribute(
  d: BlockDevice,
  key: "serial" | "wwn" | "model" | "vendor" | "type" | "partlabel",
): string | undefined {
  const v = d[key]?.trim();
  return v ? v : undefined;
}

function numericAttribute(d: BlockDevice, key: DeviceRequirement["key"]): number | undefined {
  if (key === "size") return d.size;
  if (key === "rotational") return d.rotational === undefined ? undefined : d.rotational ? 1 : 0;
  return undefined;
}

/** Quantities seen in selectors, parsed once: every node's plan compiles the same selectors. */
const quantities = new Map<string, number | undefined>();

/** A GreaterThan/LessThan/In value as a number: a quantity for size, 0/1 for rotational. */
function numeric(key: DeviceRequirement["key"], value: string): number | undefined {
  if (key === "rotational")
    return value === "true" || value === "1" ? 1 : value === "false" || value === "0" ? 0 : undefined;
  if (!quantities.has(value)) {
    if (quantities.size > 10_000) quantities.clear();
    const q = parseQuantity(value);
    quantities.set(value, q.ok ? q.bytes : undefined);
  }
  return quantities.get(value);
}
