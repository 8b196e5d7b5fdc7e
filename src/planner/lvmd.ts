import type { DeviceClass, LVMNodeSpec } from "../api";
import { DEFAULTS } from "../api";
import { canonicalJson } from "./hash";
import { step } from "./plan-objects";
import type { LvmdConfig, LvmdDeviceClass, PlanAction } from "./types";

/** Where TopoLVM's lvmd reads its configuration (the lvmd DaemonSet mounts it there). */
export const DEFAULT_LVMD_CONFIG_PATH = "/etc/topolvm/lvmd.yaml";

/**
 * TopoLVM's lvmd.yaml for a node: the device classes whose volume group (and, for Thin, thin pool)
 * exists once the plan has run, in spec order. Thick classes get `spare-gb: 0` (lvmd's default keeps
 * 10GB of every group unused); thin classes name their pool and overprovision ratio.
 */
export function lvmdConfigFor(spec: LVMNodeSpec, ready: (dc: DeviceClass) => boolean): LvmdConfig {
  // Keys in sorted order, as everywhere in a plan (plan-objects.ts).
  const classes: LvmdDeviceClass[] = (spec.deviceClasses ?? []).filter(ready).map((dc) =>
    dc.strategy === "Thin"
      ? {
          ...(dc.default ? { default: true } : {}),
          name: dc.name,
          // lvmd subtracts spare-gb (default 10) from a thin class's free space too (GetFreeBytes),
          // while topolvm-node's capacity annotation does not: 0 makes the two agree.
          "spare-gb": 0,
          "thin-pool": { name: dc.thin!.poolName, "overprovision-ratio": dc.thin!.overprovisionRatio },
          type: "thin",
          "volume-group": dc.volumeGroup,
        }
      : {
          ...(dc.default ? { default: true } : {}),
          name: dc.name,
          "spare-gb": 0,
          type: "thick",
          "volume-group": dc.volumeGroup,
        },
  );
  return { "device-classes": classes, "socket-name": spec.lvmd?.socketName ?? DEFAULTS.lvmdSocket };
}

/** The YAML text of an lvmd config. Every string is double-quoted (JSON strings are valid YAML). */
export function renderLvmdYaml(config: LvmdConfig): string {
  const q = (s: string) => JSON.stringify(s);
  const lines: string[] = [];
  if (config["socket-name"] !== undefined) lines.push(`socket-name: ${q(config["socket-name"])}`);
  if (config["device-classes"].length === 0) lines.push("device-classes: []");
  else lines.push("device-classes:");
  for (const dc of config["device-classes"]) {
    lines.push(`  - name: ${q(dc.name)}`);
    lines.push(`    volume-group: ${q(dc["volume-group"])}`);
    if (dc.default !== undefined) lines.push(`    default: ${dc.default}`);
    if (dc.type !== undefined) lines.push(`    type: ${q(dc.type)}`);
    if (dc["spare-gb"] !== undefined) lines.push(`    spare-gb: ${dc["spare-gb"]}`);
    if (dc["thin-pool"]) {
      lines.push("    thin-pool:");
      lines.push(`      name: ${q(dc["thin-pool"].name)}`);
      lines.push(`      overprovision-ratio: ${dc["thin-pool"]["overprovision-ratio"]}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

/**
 * The write-lvmd-config step, if one is needed: when the agent read the current config
 * (`current`, null for no file) and it differs; when it did not (undefined), alongside any other
 * change on the node. `rendered`: the desired config's canonical JSON and YAML, when already known.
 */
export function lvmdWriteAction(
  desired: LvmdConfig,
  current: LvmdConfig | null | undefined,
  path: string,
  otherChanges: boolean,
  rendered?: { readonly canonical: string; readonly yaml: string },
): PlanAction | undefined {
  const needed =
    current === undefined
      ? otherChanges
      : current === null || canonicalJson(current) !== (rendered?.canonical ?? canonicalJson(desired));
  if (!needed) return undefined;
  const names = desired["device-classes"].map((dc) => dc.name);
  return step(
    "write-lvmd-config",
    [],
    names.length
      ? `write ${path} with device ${names.length === 1 ? "class" : "classes"} ${names.join(", ")} for TopoLVM's lvmd`
      : `write ${path} with no device classes for TopoLVM's lvmd`,
    { file: { path, content: rendered?.yaml ?? renderLvmdYaml(desired) } },
  );
}
