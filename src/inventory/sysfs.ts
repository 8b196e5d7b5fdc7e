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

/** One attribute discovery reads for each device, relative to /sys/class/block/<kname>/. */
export interface SysfsAttribute {
  readonly name: string;
  /**
   * True when the value cannot change while the device keeps its identity (the same device node of
   * the same kernel device, src/inventory/probe-cache.ts's identity key): the hardware's serial, world
   * wide name, model and vendor, the removable-media flag, a partition's number. Discovery then reads
   * it once per device and answers later reads from its cache. False for everything the kernel or an
   * administrator can change under a device that stays the same: its size (resize), `ro`
   * (`blockdev --setro`), `queue/rotational` (writable by root), a loop device's backing file
   * (LOOP_CHANGE_FD), device-mapper's name (`dmsetup rename`) and suspension, and `dev` itself (read
   * for the key). Reading one costs microseconds (a synchronous sysfs read): a wrong "static" mark would
   * save almost nothing and show a stale fact, so when in doubt an attribute is not static.
   */
  readonly static: boolean;
}

/**
 * The attributes discovery reads for each device, with whether each is static (SysfsAttribute). "size",
 * "partition" and "dm/name" are recorded for people reading a raw inventory; lsblk's values are used.
 */
export const SYSFS_ATTRIBUTES: readonly SysfsAttribute[] = [
  { name: "dev", static: false },
  { name: "size", static: false },
  { name: "ro", static: false },
  { name: "removable", static: true },
  { name: "partition", static: true },
  { name: "queue/rotational", static: false },
  { name: "serial", static: true },
  { name: "device/serial", static: true },
  { name: "wwid", static: true },
  { name: "device/wwid", static: true },
  { name: "device/model", static: true },
  { name: "device/vendor", static: true },
  { name: "loop/backing_file", static: false },
  { name: "dm/name", static: false },
  { name: "dm/suspended", static: false },
];

/** The raw key under which discovery records the holders/ listing. */
export const SYSFS_HOLDERS = "holders";

/**
 * The SCSI unit serial number page (VPD 0x80), a binary file: without udev the only place a SCSI disk's
 * serial shows. Read beside SYSFS_ATTRIBUTES (it is binary) and static as their serials are.
 */
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
