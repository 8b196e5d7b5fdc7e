import { DEFAULTS, type DeviceClass } from "../api";
import { lvmdConfigFor } from "../planner/lvmd";
import type { LvmdDeviceClass } from "../planner/types";

/** Inputs of topolvmValues. */
export interface TopolvmValuesArgs {
  /** The device classes lvmd serves, as in the node set templates (validated). */
  readonly deviceClasses: readonly DeviceClass[];
  /** The user's extra chart values. @default {} */
  readonly values?: Readonly<Record<string, unknown>>;
}

/**
 * Values for TopoLVM's Helm chart: the user's values with ours on top. Ours are lvmd's device
 * classes (derived from our API, so lvmd serves exactly what the agents build), lvmd's socket (where
 * the agent and topolvm-node expect it) and no chart StorageClasses (each DeviceClass
 * component creates its own, named by the API's naming policy).
 */
export function topolvmValues(args: TopolvmValuesArgs): Record<string, unknown> {
  const ours = {
    lvmd: {
      managed: true,
      socketName: DEFAULTS.lvmdSocket,
      deviceClasses: lvmdDeviceClasses(args.deviceClasses),
    },
    node: { lvmdSocket: DEFAULTS.lvmdSocket },
    storageClasses: [],
  };
  return mergeValues(args.values ?? {}, ours);
}

/**
 * lvmd.yaml `device-classes` entries for our device classes: the planner's own mapping (the same
 * the agents write to lvmd.yaml), so the chart's lvmd and the agents agree.
 */
export function lvmdDeviceClasses(deviceClasses: readonly DeviceClass[]): LvmdDeviceClass[] {
  return [
    ...lvmdConfigFor({ volumeGroups: [], deviceClasses: [...deviceClasses] }, () => true)["device-classes"],
  ];
}

/** Deep merge of plain objects; `top` wins, arrays and scalars are replaced, not merged. */
export function mergeValues(
  base: Readonly<Record<string, unknown>>,
  top: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(top)) {
    const under = out[key];
    out[key] = isPlainObject(under) && isPlainObject(value) ? mergeValues(under, value) : value;
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
