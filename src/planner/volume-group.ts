import { OWNER_TAG } from "../inventory/types";
import {
  pvchangeAddTagArgv,
  pvcreateArgv,
  pvmoveArgv,
  pvremoveArgv,
  vgcreateArgv,
  vgextendArgv,
  vgreduceArgv,
  wipefsArgv,
} from "./argv";
import type { LogicalVolume } from "../inventory/types";
import type { VolumeGroupClaims } from "./claims";
import { planMissingDevices } from "./missing-devices";
import { displayName, joinNames } from "./node-index";
import { knameTag, type Member } from "./ownership";
import type { VolumeGroupGeometry } from "./thin";
import { deviceClaim, signatureText, step } from "./plan-objects";
import type { Blocked, DeviceClaim, PlanAction } from "./types";
import { formatSize } from "./units";

/** lvm2's defaults for a new group: 4MiB extents, data starting 1MiB into each physical volume. */
export const DEFAULT_EXTENT_SIZE = 4 * 1024 * 1024;
export const DEFAULT_PE_START = 1024 * 1024;

/** Extents a device gives once it is a physical volume, assuming lvm2's default 1MiB data offset. */
export function estimatedPvExtents(deviceSize: number, extentSize: number): number {
  return Math.max(0, Math.floor((deviceSize - DEFAULT_PE_START) / extentSize));
}

export interface VolumeGroupResult {
  readonly claimed: readonly DeviceClaim[];
  readonly leaving: readonly DeviceClaim[];
  readonly actions: readonly PlanAction[];
  readonly blocked: readonly Blocked[];
  /** The group exists, and is ours, once the plan has run. */
  readonly available: boolean;
  /** Whether the plan may create or grow thin pools in it. */
  readonly changeable: boolean;
  /** Its size once the plan has run; undefined when it will not exist. */
  readonly geometry?: VolumeGroupGeometry;
}

/**
 * The physical volume steps for one volume group: new devices are wiped (only with the opt-in),
 * initialised, added (vgcreate or vgextend) and tagged with the kernel name they joined under;
 * members the selector no longer picks have their extents moved to the remaining ones (pvmove, only
 * when those have room), then leave (vgreduce) and lose their LVM label (pvremove).
 */
/** A present member of a volume group as a claim: its stable id, and the name it joined under if renamed. */
export function memberClaim(m: Member, ids: ReadonlyMap<string, string>): DeviceClaim {
  return deviceClaim({
    kname: m.device.kname,
    path: displayName(m.device),
    id: ids.get(m.device.kname)!,
    size: m.device.size,
    member: true,
    ...(m.recordedKname && m.recordedKname !== m.device.kname ? { renamedFrom: m.recordedKname } : {}),
  });
}

/** `lvs`: the node's logical volumes (a group missing a disk names those it loses). */
export function planVolumeGroup(
  c: VolumeGroupClaims,
  ids: ReadonlyMap<string, string>,
  lvs: readonly LogicalVolume[] = [],
): VolumeGroupResult {
  const vg = c.vg.name;
  const claim = (m: Member): DeviceClaim => memberClaim(m, ids);
  const staying = c.staying.map(claim);
  const leaving = c.leaving.map(claim);
  const joining: DeviceClaim[] = c.joining.map((j) =>
    deviceClaim({
      kname: j.device.kname,
      path: displayName(j.device),
      id: ids.get(j.device.kname)!,
      size: j.device.size,
      member: false,
      wipe: j.wipe.length ? j.wipe : undefined,
      wipeSignatures: j.wipe.length ? j.wipeSignatures : undefined,
      adopted: j.adopted || undefined,
    }),
  );
  const claimed = [...staying, ...joining];
  const result = (r: Omit<VolumeGroupResult, "claimed" | "leaving">): VolumeGroupResult => ({
    claimed,
    leaving,
    ...r,
  });

  if (c.state.kind === "foreign")
    return result({
      actions: [],
      blocked: [
        {
          volumeGroup: vg,
          reason: `volume group ${vg} exists on this node without the ${OWNER_TAG} tag; pulumi-lvm does not own it and changes nothing in it`,
        },
      ],
      available: false,
      changeable: false,
    });
  if (c.state.kind === "owned" && c.state.missing.length)
    return result({
      ...planMissingDevices(vg, c.vg.missingDevicePolicy, c.state.missing, lvs),
      available: true,
      changeable: false,
    });
  if (c.state.kind === "absent" && joining.length === 0)
    return result({
      actions: [],
      blocked: [
        {
          volumeGroup: vg,
          reason: `volume group ${vg} has no usable devices on this node, so it is not created`,
        },
      ],
      available: false,
      changeable: false,
    });

  const actions: PlanAction[] = [];
  const blocked: Blocked[] = [];
  for (const d of joining) {
    const on = { volumeGroup: vg, device: d.path, deviceId: d.id };
    if (d.wipe)
      actions.push(
        step(
          "wipefs",
          wipefsArgv(d.path!),
          `erase the ${d.wipeSignatures ? joinNames(d.wipeSignatures.map(signatureText)) : joinNames(d.wipe)} ${(d.wipeSignatures ?? d.wipe).length === 1 ? "signature" : "signatures"} on ${d.path} (forceWipeDevicesAndDestroyAllData): destroys the data on it`,
          { ...on, destructive: true, ...(d.wipeSignatures ? { signatures: d.wipeSignatures } : {}) },
        ),
      );
    if (!d.adopted)
      actions.push(
        step("pvcreate", pvcreateArgv(d.path!), `initialise ${d.path} as a physical volume for ${vg}`, on),
      );
  }
  const extentSize = c.state.kind === "owned" ? c.state.info.extentSize : DEFAULT_EXTENT_SIZE;
  if (c.state.kind === "absent")
    actions.push(
      step(
        "vgcreate",
        vgcreateArgv(
          vg,
          joining.map((d) => d.path!),
        ),
        `create volume group ${vg} on ${joinNames(joining.map((d) => d.path!))}, tagged ${OWNER_TAG}`,
        { volumeGroup: vg, devices: joining.map((d) => d.path!), deviceIds: joining.map((d) => d.id) },
      ),
    );
  else
    for (const d of joining)
      actions.push(
        step("vgextend", vgextendArgv(vg, d.path!), `add ${d.path} to volume group ${vg}`, {
          volumeGroup: vg,
          device: d.path,
          deviceId: d.id,
        }),
      );
  const untagged = [...joining];
  c.staying.forEach((m, i) => m.recordedKname || untagged.push(staying[i]!));
  for (const d of untagged)
    actions.push(
      step(
        "pvchange",
        pvchangeAddTagArgv(knameTag(d.kname), d.path!),
        `record on ${d.path} that it joined ${vg} as ${d.kname}, so the selector keeps meaning it after a kernel rename`,
        { volumeGroup: vg, device: d.path, deviceId: d.id },
      ),
    );

  const newExtents = joining.reduce((sum, d) => sum + estimatedPvExtents(d.size, extentSize), 0);
  if (c.state.kind === "absent")
    return result({
      actions,
      blocked,
      available: true,
      changeable: true,
      geometry: { exact: false, extentSize, extentCount: newExtents, freeExtents: newExtents },
    });

  // The group exists and is ours: members leave only if the others can take their data.
  const info = c.state.info;
  let removedExtents = 0;
  if (leaving.length && claimed.length === 0) {
    blocked.push({
      volumeGroup: vg,
      reason: `the selector of ${vg} selects none of its physical volumes (${joinNames(leaving.map((d) => d.path!))}); a volume group is never emptied by a plan, remove it with a teardown`,
    });
  } else if (leaving.length) {
    const destinations = claimed.map((d) => d.path!);
    const destinationIds = claimed.map((d) => d.id);
    let room = c.staying.reduce((sum, m) => sum + Math.floor(m.pv.free / extentSize), 0) + newExtents;
    for (const m of c.leaving) {
      const d = claim(m);
      const total = Math.round(m.pv.size / extentSize);
      const allocated = Math.round((m.pv.size - m.pv.free) / extentSize);
      if (allocated > room) {
        blocked.push({
          volumeGroup: vg,
          device: d.path,
          reason: `${d.path} left the selector of ${vg} but stays: moving its ${allocated} allocated extents (${formatSize(allocated * extentSize)}) needs that much free space on the remaining physical volumes, which have ${room} free extents (${formatSize(room * extentSize)})`,
        });
        continue;
      }
      const on = { volumeGroup: vg, device: d.path, deviceId: d.id };
      if (allocated > 0) {
        room -= allocated;
        actions.push(
          step(
            "pvmove",
            pvmoveArgv(d.path!, destinations),
            `move the ${allocated} allocated extents (${formatSize(allocated * extentSize)}) of ${d.path}, which left the selector of ${vg}, onto its remaining physical volumes`,
            { ...on, devices: destinations, deviceIds: destinationIds },
          ),
        );
      }
      removedExtents += total;
      actions.push(
        step(
          "vgreduce",
          vgreduceArgv(vg, d.path!),
          `remove ${d.path} from volume group ${vg}: its selector no longer selects it`,
          on,
        ),
      );
      actions.push(
        step(
          "pvremove",
          pvremoveArgv(d.path!),
          `remove the LVM label from ${d.path}, which has left ${vg}`,
          on,
        ),
      );
    }
  }
  const changes = joining.length > 0 || removedExtents > 0;
  return result({
    actions,
    blocked,
    available: true,
    changeable: true,
    geometry: {
      exact: !changes,
      extentSize,
      extentCount: info.extentCount + newExtents - removedExtents,
      freeExtents: info.freeExtentCount + newExtents - removedExtents,
    },
  });
}
