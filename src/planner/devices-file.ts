import { devicesFileInUse, listsDevice, listsPv, type DevicesFile } from "../inventory/devices-file";
import type { PhysicalVolume } from "../inventory/types";
import { lvmdevicesAddArgv, lvmdevicesDelArgv } from "./argv";
import { step } from "./plan-objects";
import type { DeviceClaim, PlanAction } from "./types";

/**
 * The steps that keep lvm's devices file (/etc/lvm/devices/system.devices, on by default on RHEL
 * 9-family hosts) true for our groups: while it is in use the host's lvm, boot-time activation and
 * TopoLVM's lvmd see only the devices listed in it. The agent runs every other lvm command with
 * `use_devicesfile=0` (so its own view never depends on the file), so pvcreate and pvremove do not
 * touch the file: the plan adds every device of a group we keep (`lvmdevices --adddev`, after its
 * pvcreate) and removes every device whose label it removes (`lvmdevices --deldev`, before its
 * pvremove). Nothing when the file is not in use, including use_devicesfile=1 without the file: lvm
 * then uses every device, and a first --adddev would create the file and hide every other device of
 * the host (its root volume group too).
 */

/** One device of a group after the plan, and the physical volume on it now, if any. */
export interface KeptDevice {
  readonly claim: DeviceClaim;
  readonly pv?: PhysicalVolume;
}

/** `lvmdevices --adddev` for each kept device the file does not list (a new PV: always). */
export function addToDevicesFile(
  file: DevicesFile | undefined,
  vg: string,
  kept: readonly KeptDevice[],
): PlanAction[] {
  if (!devicesFileInUse(file)) return [];
  return kept
    .filter(({ pv }) => pv === undefined || !listsPv(file, pv.uuid))
    .map(({ claim, pv }) =>
      step(
        "lvmdevices-adddev",
        lvmdevicesAddArgv(claim.path!),
        pv
          ? `list ${claim.path} (physical volume of ${vg}) in lvm's devices file ${file.name}: the host's lvm does not see it now`
          : `list ${claim.path} in lvm's devices file ${file.name}, so the host's lvm and lvmd see ${vg} on it`,
        { volumeGroup: vg, device: claim.path, deviceId: claim.id },
      ),
    );
}

/** `lvmdevices --deldev` before each pvremove of a device the file lists (by its PV or its path). */
export function removeFromDevicesFile(
  file: DevicesFile | undefined,
  pvremoves: readonly PlanAction[],
  pvOf: (device: string) => PhysicalVolume | undefined,
): PlanAction[] {
  if (!devicesFileInUse(file)) return [];
  return pvremoves.flatMap((a) => {
    const device = a.device!;
    const pv = pvOf(device);
    if (!(pv && listsPv(file, pv.uuid)) && !listsDevice(file, [device])) return [];
    return [
      step(
        "lvmdevices-deldev",
        lvmdevicesDelArgv(device),
        `remove ${device} from lvm's devices file ${file.name} before its LVM label is removed`,
        {
          ...(a.volumeGroup !== undefined ? { volumeGroup: a.volumeGroup } : {}),
          device,
          ...(a.deviceId !== undefined ? { deviceId: a.deviceId } : {}),
        },
      ),
    ];
  });
}
