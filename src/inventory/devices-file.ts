/**
 * lvm's devices file (lvm 2.03.12+, on by default on RHEL 9-family hosts): `devices/use_devicesfile`
 * and the list in /etc/lvm/devices/<devicesfile>. While the file is in use, the host's lvm (boot-time
 * activation, TopoLVM's lvmd, an admin's `vgs`) sees only the devices listed in it.
 *
 * Read from what two commands printed (never from lvm.conf by hand):
 * `lvm config --type full devices/use_devicesfile devices/devicesfile` and `lvm lvmdevices`.
 */

/** Its two settings, as lvm merges them from lvm.conf, lvmlocal.conf and its defaults. */
export const DEVICES_FILE_CONFIG_ARGV: readonly string[] = [
  "lvm",
  "config",
  "--type",
  "full",
  "devices/use_devicesfile",
  "devices/devicesfile",
];

/** The file's entries, one "  Device <devname> IDTYPE=... IDNAME=... DEVNAME=... PVID=..." line each. */
export const LVMDEVICES_LIST_ARGV: readonly string[] = ["lvm", "lvmdevices"];

/** The raw form (RawNodeInventory.devicesFile): what the two commands printed. */
export interface RawDevicesFile {
  /** stdout of `lvm config --type full devices/use_devicesfile devices/devicesfile`. */
  readonly config: string;
  /** stdout of `lvm lvmdevices` (the entries), or null when lvm said the file does not exist. */
  readonly list: string | null;
}

/** One entry of the devices file, as `lvm lvmdevices` prints it. */
export interface DevicesFileEntry {
  /** DEVNAME: the device's path when the entry was last written, e.g. "/dev/sdb". */
  readonly devname?: string;
  /** PVID: the physical volume's UUID without dashes; absent for "." (not a PV when added). */
  readonly pvid?: string;
  readonly idtype?: string;
  readonly idname?: string;
}

export interface DevicesFile {
  /** `devices/use_devicesfile` is 1. */
  readonly enabled: boolean;
  /** `devices/devicesfile`, the file's name under <LVM_SYSTEM_DIR>/devices/. @example "system.devices" */
  readonly name: string;
  /** The file exists. lvm uses every device while it does not, even with use_devicesfile=1. */
  readonly exists: boolean;
  readonly entries: readonly DevicesFileEntry[];
}

/** lvm limits the host to the file's devices: enabled, and the file exists. */
export function devicesFileInUse(f: DevicesFile | undefined): f is DevicesFile {
  return f !== undefined && f.enabled && f.exists;
}

/** lvm's message for `lvm lvmdevices` when use_devicesfile=1 but the file is not there. */
export const NO_DEVICES_FILE = /Devices file does not exist/;

export function parseDevicesFile(raw: RawDevicesFile): DevicesFile {
  const settings = new Map<string, string>();
  for (const line of raw.config.split("\n")) {
    const m = /^\s*([a-z_]+)=(.*)$/.exec(line);
    if (m) settings.set(m[1]!, m[2]!.trim());
  }
  const use = settings.get("use_devicesfile");
  const name = settings.get("devicesfile");
  if (use !== "0" && use !== "1")
    throw new Error(`devices/use_devicesfile is ${JSON.stringify(use ?? null)}, expected 0 or 1`);
  if (name === undefined || !/^"[^"/]+"$/.test(name))
    throw new Error(`devices/devicesfile is ${JSON.stringify(name ?? null)}, expected a quoted file name`);
  const entries: DevicesFileEntry[] = [];
  for (const line of (raw.list ?? "").split("\n")) {
    if (!/^\s*Device\s/.test(line)) continue;
    const field = (key: string) => new RegExp(`(?:^|\\s)${key}=(\\S+)`).exec(line)?.[1];
    const pvid = field("PVID");
    const entry = {
      devname: field("DEVNAME"),
      pvid: pvid && pvid !== "." ? pvid : undefined,
      idtype: field("IDTYPE"),
      idname: field("IDNAME"),
    };
    entries.push(
      Object.fromEntries(Object.entries(entry).filter(([, v]) => v !== undefined)) as DevicesFileEntry,
    );
  }
  return { enabled: use === "1", name: name.slice(1, -1), exists: raw.list !== null, entries };
}

/** The physical volume with this UUID (lvm's dashed form) has an entry in the file. */
export function listsPv(f: DevicesFile, pvUuid: string): boolean {
  const pvid = pvUuid.replace(/-/g, "");
  return f.entries.some((e) => e.pvid === pvid);
}

/** The device at one of these paths has an entry (by DEVNAME), with or without a PVID. */
export function listsDevice(f: DevicesFile, paths: readonly string[]): boolean {
  return f.entries.some((e) => e.devname !== undefined && paths.includes(e.devname));
}
