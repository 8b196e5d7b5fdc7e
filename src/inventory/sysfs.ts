import { compact } from "./raw-shape";

/**
 * Facts read from sysfs for one block device, for what lsblk leaves empty without udev (serial, wwn)
 * and what it never shows (loop backing file, dm suspended, holders).
 *
 * The raw form is `{ attribute: file content }` with attributes relative to /sys/class/block/<kname>/,
 * contents as read (with their trailing newline), and "holders" the entries of holders/ separated by spaces.
 */
export interface SysfsFacts {
  /** "major:minor" from `dev`. */
  readonly majMin?: string;
  readonly readOnly?: boolean;
  readonly removable?: boolean;
  readonly rotational?: boolean;
  readonly serial?: string;
  readonly wwn?: string;
  readonly model?: string;
  readonly vendor?: string;
  readonly backingFile?: string;
  readonly suspended?: boolean;
  /** knames (as /dev paths) of the devices holding this one: dm, md, bcache. */
  readonly holders: readonly string[];
}

/**
 * The attributes discovery reads for each device (relative to /sys/class/block/<kname>/). "size",
 * "partition" and "dm/name" are recorded for people reading a raw inventory; lsblk's values are used.
 */
export const SYSFS_ATTRIBUTES = [
  "dev",
  "size",
  "ro",
  "removable",
  "partition",
  "queue/rotational",
  "serial",
  "device/serial",
  "wwid",
  "device/wwid",
  "device/model",
  "device/vendor",
  "loop/backing_file",
  "dm/name",
  "dm/suspended",
] as const;

/** The raw key under which discovery records the holders/ listing. */
export const SYSFS_HOLDERS = "holders";

/** The SCSI unit serial number page (VPD 0x80), a binary file: without udev the only place a SCSI disk's serial shows. */
export const SYSFS_VPD_UNIT_SERIAL = "device/vpd_pg80";

/** The raw key under which discovery records that page, as lowercase hex. */
export const SYSFS_VPD_UNIT_SERIAL_HEX = `${SYSFS_VPD_UNIT_SERIAL} (hex)`;

/** Parses one device's attributes; unknown attributes are ignored, odd values throw naming the attribute. */
export function parseSysfs(attrs: Readonly<Record<string, string>>): SysfsFacts {
  const text = (key: string): string | undefined => {
    const v = attrs[key]?.trim();
    return v ? v : undefined;
  };
  const flag = (key: string): boolean | undefined => {
    const v = text(key);
    if (v === undefined) return undefined;
    if (v === "0" || v === "1") return v === "1";
    throw new Error(`${key}: expected "0" or "1" (got ${JSON.stringify(v)})`);
  };
  const facts: SysfsFacts = {
    majMin: text("dev"),
    readOnly: flag("ro"),
    removable: flag("removable"),
    rotational: flag("queue/rotational"),
    serial: text("serial") ?? text("device/serial") ?? unitSerialFromVpd(text(SYSFS_VPD_UNIT_SERIAL_HEX)),
    wwn: wwnFromWwid(text("wwid") ?? text("device/wwid")),
    model: text("device/model"),
    vendor: text("device/vendor"),
    backingFile: text("loop/backing_file"),
    suspended: flag("dm/suspended"),
    holders: (text(SYSFS_HOLDERS) ?? "")
      .split(/\s+/)
      .filter(Boolean)
      .map((h) => `/dev/${h}`),
  };
  return compact(facts);
}

/**
 * A sysfs wwid as the world wide name lsblk would print: "naa.5000c500a1b2c3d4" → "0x5000c500a1b2c3d4";
 * NVMe "eui.<hex>" kept (lowercase). Vendor-specific ids ("t10.ATA QEMU...", "nvme.1b36-...") are not
 * world wide names → undefined.
 */
export function wwnFromWwid(wwid: string | undefined): string | undefined {
  if (!wwid) return undefined;
  const w = wwid.trim().toLowerCase();
  if (/^naa\.[0-9a-f]+$/.test(w)) return `0x${w.slice(4)}`;
  if (/^0x[0-9a-f]+$/.test(w)) return w;
  if (/^eui\.[0-9a-f]+$/.test(w)) return w;
  return undefined;
}

/**
 * The serial in a SCSI unit serial number page (SPC: byte 1 page code 0x80, bytes 2–3 the length, then
 * that many ASCII bytes, often space-padded), given as hex. A page that is not 0x80, is shorter than it
 * says, or holds anything but printable ASCII gives undefined: a device's odd firmware must not stop
 * the inventory, and a serial we cannot read exactly must not be matched against.
 */
export function unitSerialFromVpd(hex: string | undefined): string | undefined {
  if (!hex || !/^(?:[0-9a-f]{2})+$/i.test(hex)) return undefined;
  const page = Buffer.from(hex, "hex");
  if (page.length < 4 || page[1] !== 0x80) return undefined;
  const end = 4 + page.readUInt16BE(2);
  if (end > page.length) return undefined;
  const serial = page
    .subarray(4, end)
    .toString("latin1")
    .replace(/^[ \0]+|[ \0]+$/g, "");
  return serial && /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(serial) ? serial : undefined;
}
