import type { LVMNodeSpec } from "../api";
import type { LogicalVolume, NodeInventory } from "../inventory/types";
import { AgentError } from "./errors";

export interface TeardownTarget {
  /** Tear down this volume group (with its thin pools). */
  readonly volumeGroup?: string;
  /** Tear down the volume group of this device class; refused when other device classes share it. */
  readonly deviceClass?: string;
  /** Remove the volume group even when it holds logical volumes other than our thin pools. @default false */
  readonly force?: boolean;
}

/** The volume group a teardown request names (undefined: every volume group of the spec). */
export function teardownVolumeGroup(spec: LVMNodeSpec, target: TeardownTarget): string | undefined {
  if (target.volumeGroup !== undefined) {
    if (!spec.volumeGroups.some((vg) => vg.name === target.volumeGroup))
      throw new AgentError(
        400,
        "UnknownVolumeGroup",
        `volume group "${target.volumeGroup}" is not in spec.volumeGroups`,
        {
          problems: [
            {
              path: "volumeGroup",
              message: `is not in spec.volumeGroups (have: ${spec.volumeGroups.map((v) => v.name).join(", ")})`,
            },
          ],
        },
      );
    return target.volumeGroup;
  }
  if (target.deviceClass === undefined) return undefined;
  const classes = spec.deviceClasses ?? [];
  const dc = classes.find((c) => c.name === target.deviceClass);
  if (!dc)
    throw new AgentError(
      400,
      "UnknownDeviceClass",
      `device class "${target.deviceClass}" is not in spec.deviceClasses`,
      {
        problems: [
          {
            path: "deviceClass",
            message: `is not in spec.deviceClasses (have: ${classes.map((c) => c.name).join(", ") || "none"})`,
          },
        ],
      },
    );
  const sharing = classes
    .filter((c) => c.volumeGroup === dc.volumeGroup && c.name !== dc.name)
    .map((c) => c.name);
  if (sharing.length)
    throw new AgentError(
      409,
      "VolumeGroupShared",
      `device class "${dc.name}" shares volume group "${dc.volumeGroup}" with ${sharing.join(", ")}; tear down the volume group, or remove the device class from the spec`,
      { volumeGroup: dc.volumeGroup, deviceClasses: [dc.name, ...sharing] },
    );
  return dc.volumeGroup;
}

/**
 * Logical volumes in `volumeGroups` that are not ours: anything but the spec's thin pools and lvm's
 * own hidden volumes (`[pool0_tdata]`, `[lvol0_pmspare]`, ...). Thin volumes in our pools are user
 * data (TopoLVM's volumes) and count.
 */
export function userVolumes(
  inventory: NodeInventory,
  spec: LVMNodeSpec,
  volumeGroups: readonly string[],
): LogicalVolume[] {
  const pools = new Set(
    (spec.deviceClasses ?? []).flatMap((dc) => (dc.thin ? [`${dc.volumeGroup}/${dc.thin.poolName}`] : [])),
  );
  return inventory.lvs.filter((lv) => {
    if (!volumeGroups.includes(lv.vgName) || lv.hidden) return false;
    const name = lv.name.replace(/^\[(.*)\]$/, "$1");
    if (name !== lv.name) return false;
    return !(pools.has(`${lv.vgName}/${name}`) && lv.attr.startsWith("t"));
  });
}

/** Refuses (409, listing them) a teardown whose volume groups hold user volumes, unless forced. */
export function checkNoUserVolumes(
  inventory: NodeInventory,
  spec: LVMNodeSpec,
  target: TeardownTarget,
): void {
  if (target.force) return;
  const vg = teardownVolumeGroup(spec, target);
  const groups = vg ? [vg] : spec.volumeGroups.map((v) => v.name);
  const volumes = userVolumes(inventory, spec, groups);
  if (volumes.length === 0) return;
  throw new AgentError(
    409,
    "VolumeGroupInUse",
    `${groups.join(", ")} still hold${groups.length === 1 ? "s" : ""} logical volumes that are not ours: ${volumes.map((lv) => `${lv.vgName}/${lv.name}`).join(", ")}; remove them first, or tear down with force (destroys their data)`,
    {
      volumes: volumes.map((lv) => ({
        volumeGroup: lv.vgName,
        name: lv.name,
        attributes: lv.attr,
        size: lv.size,
      })),
    },
  );
}
