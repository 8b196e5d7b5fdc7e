import * as fs from "node:fs/promises";
import * as path from "node:path";
import { SYSFS_VPD_UNIT_SERIAL, unitSerialFromVpd, wwnFromWwid } from "../inventory/sysfs";
import type { Runner } from "./lvm-runner";
import { readPvUuid } from "./pv-label";

/** What a device identity check needs: the runner (lsblk, pvs) and the filesystem (/dev, /sys). */
export interface IdentityProbeDeps {
  readonly run: Runner;
  /** @default node:fs/promises realpath */
  readonly realpath?: (p: string) => Promise<string>;
  /** True when `p` is a block device. @default fs.stat(p).isBlockDevice() */
  readonly isBlockDevice?: (p: string) => Promise<boolean>;
  /** Reads a sysfs attribute, undefined when absent. @default fs.readFile */
  readonly readSysfs?: (p: string) => Promise<string | undefined>;
  /** Reads a binary sysfs attribute (a SCSI VPD page), undefined when absent. @default fs.readFile */
  readonly readSysfsBytes?: (p: string) => Promise<Uint8Array | undefined>;
  /** The PV UUID of the LVM2 label on a device, undefined when it has none. @default readPvUuid (reads the label) */
  readonly readPvUuid?: (device: string) => Promise<string | undefined>;
}

/** A device is not (or no longer) the one the plan named. */
export class DeviceIdentityError extends Error {
  constructor(
    readonly device: string,
    readonly expected: string,
    readonly found: string,
  ) {
    super(`${device} is not the device the plan named: expected identity ${expected}, found ${found}`);
    this.name = "DeviceIdentityError";
  }
}

/**
 * Re-checks, right before a write, that `device` still has every identity in `expected`
 * (the DeviceClaim.id formats: "wwn:<wwn>+serial:<serial>", "by-id:<link>", "pv:<uuid>",
 * "kname:<path>"). Probes only what each identity needs, fresh, nothing cached: the device node,
 * a by-id link, the PV label on the device, or lsblk/sysfs for wwn and serial.
 * Throws DeviceIdentityError on the first mismatch.
 */
export async function verifyDeviceIdentity(
  deps: IdentityProbeDeps,
  device: string,
  expected: readonly string[],
): Promise<void> {
  const realpath = deps.realpath ?? ((p: string) => fs.realpath(p));
  const isBlockDevice = deps.isBlockDevice ?? defaultIsBlockDevice;
  const readSysfs = deps.readSysfs ?? defaultReadSysfs;
  const readSysfsBytes = deps.readSysfsBytes ?? ((p: string) => fs.readFile(p).catch(() => undefined));
  const kname = await realpath(device).catch(() => undefined);
  if (!kname || !(await isBlockDevice(kname)))
    throw new DeviceIdentityError(device, expected.join(", "), "no such block device");
  for (const id of new Set(expected)) {
    const parsed = parseDeviceId(id);
    switch (parsed.kind) {
      case "kname": {
        const want = await realpath(parsed.path).catch(() => parsed.path);
        if (want !== kname) throw new DeviceIdentityError(device, id, `kname:${kname}`);
        break;
      }
      case "by-id": {
        const target = await realpath(parsed.link).catch(() => undefined);
        if (target !== kname)
          throw new DeviceIdentityError(
            device,
            id,
            target ? `${parsed.link} -> ${target}` : `${parsed.link} missing`,
          );
        break;
      }
      case "pv": {
        const uuid = await (deps.readPvUuid ?? readPvUuid)(device);
        if (uuid !== parsed.uuid)
          throw new DeviceIdentityError(device, id, uuid ? `pv:${uuid}` : "not a physical volume");
        break;
      }
      case "hardware": {
        const facts = await hardwareIds(deps.run, { readSysfs, readSysfsBytes }, device, kname);
        for (const [key, value] of parsed.parts) {
          const found = facts[key];
          const same = key === "wwn" ? found?.toLowerCase() === value.toLowerCase() : found === value;
          if (!same) throw new DeviceIdentityError(device, id, `${key}:${found ?? "(none)"}`);
        }
        break;
      }
      case "unknown":
        throw new DeviceIdentityError(device, id, "an identity format this agent does not know");
    }
  }
}

/* ------------------------------------------------------------------------------ helpers ---- */

export type ParsedDeviceId =
  | { kind: "kname"; path: string }
  | { kind: "by-id"; link: string }
  | { kind: "pv"; uuid: string }
  | { kind: "hardware"; parts: ReadonlyArray<readonly ["wwn" | "serial", string]> }
  | { kind: "unknown" };

/** Parses a DeviceClaim.id. */
export function parseDeviceId(id: string): ParsedDeviceId {
  if (id.startsWith("kname:")) return { kind: "kname", path: id.slice(6) };
  if (id.startsWith("by-id:")) {
    const link = id.slice(6);
    return { kind: "by-id", link: link.startsWith("/") ? link : path.posix.join("/dev/disk/by-id", link) };
  }
  if (id.startsWith("pv:")) return { kind: "pv", uuid: id.slice(3) };
  const parts: Array<readonly ["wwn" | "serial", string]> = [];
  for (const part of id.split("+")) {
    const m = /^(wwn|serial):(.+)$/.exec(part);
    if (!m) return { kind: "unknown" };
    parts.push([m[1] as "wwn" | "serial", m[2]!]);
  }
  return parts.length ? { kind: "hardware", parts } : { kind: "unknown" };
}

/**
 * wwn and serial as discovery reads them (src/inventory/parse.ts, sysfs.ts): lsblk first, sysfs when
 * lsblk (without udev) leaves them empty, and a SCSI disk's serial from its unit serial page.
 */
async function hardwareIds(
  run: Runner,
  sysfs: {
    readSysfs: (p: string) => Promise<string | undefined>;
    readSysfsBytes: (p: string) => Promise<Uint8Array | undefined>;
  },
  device: string,
  kname: string,
): Promise<{ wwn?: string; serial?: string }> {
  const r = await run(["lsblk", "--json", "--bytes", "--nodeps", "--output", "KNAME,WWN,SERIAL", device]);
  const row = (
    JSON.parse(r.stdout) as { blockdevices?: Array<{ wwn?: string | null; serial?: string | null }> }
  ).blockdevices?.[0];
  const dir = `/sys/class/block/${path.posix.basename(kname)}`;
  const sys = (attr: string) => sysfs.readSysfs(`${dir}/${attr}`);
  const vpdSerial = async () => {
    const page = await sysfs.readSysfsBytes(`${dir}/${SYSFS_VPD_UNIT_SERIAL}`);
    return page && unitSerialFromVpd(Buffer.from(page).toString("hex"));
  };
  const wwn = row?.wwn?.trim() || wwnFromWwid((await sys("wwid")) ?? (await sys("device/wwid")));
  const serial =
    row?.serial?.trim() || (await sys("serial")) || (await sys("device/serial")) || (await vpdSerial());
  return { ...(wwn ? { wwn } : {}), ...(serial ? { serial: serial.trim() } : {}) };
}

async function defaultIsBlockDevice(p: string): Promise<boolean> {
  try {
    return (await fs.stat(p)).isBlockDevice();
  } catch {
    return false;
  }
}

async function defaultReadSysfs(p: string): Promise<string | undefined> {
  try {
    return (await fs.readFile(p, "utf8")).trim() || undefined;
  } catch {
    return undefined;
  }
}
