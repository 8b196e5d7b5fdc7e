// @ts-check
/**
 * Records a whole node's raw inventory, exactly as the tools print it, in the format of the host
 * fixtures (test/fixtures/inventory/record.sh) and of RawNodeInventory (src/inventory/types.ts).
 * Runs inside the real-kernel test guest through guest.exec (`node <repo>/test/vm/collect-inventory.mjs`);
 * reads only, and needs nothing guest-specific (util-linux, lvm2, node).
 *
 * Prints one JSON object: { "plain": RawNodeInventory, "paths": RawNodeInventory }, the two differing
 * only in lsblk (`lsblk --json --bytes --output-all`, and the same with --paths). Fields:
 *   lsblk       as above, every device
 *   lvm         `lvm fullreport --reportformat json --units b --nosuffix` (null when lvm is absent)
 *   signatures  the entries of `wipefs --json --no-act --output DEVICE,OFFSET,TYPE,UUID,LABEL,LENGTH,USAGE <dev>`
 *   probed      the devices wipefs ran on (every device lsblk lists: disks, partitions, dm)
 *   blkid       device → `blkid -p -o export <dev>` ("" when it found nothing, exit 2)
 *   sysfs       kname → { attribute → content as read } for the attributes of SYSFS_ATTRIBUTES
 *               (src/inventory/sysfs.ts) that exist, "holders" (holders/ entries, space separated), and
 *               "device/vpd_pg80 (hex)": the SCSI unit serial number page, hex of the binary file —
 *               without udev the only place a SCSI disk's serial shows
 *   links       symlinks under /dev/disk/by-* and /dev/mapper → the absolute path they resolve to
 *   mounts      /proc/self/mountinfo, whole
 *   swaps       /proc/swaps, whole
 * Usage: node collect-inventory.mjs [labels-json]
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";

// Keep in step with SYSFS_ATTRIBUTES in src/inventory/sysfs.ts (and sysfs_attrs in record.sh).
const SYSFS_ATTRIBUTES = [
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
];

const env = { ...process.env, LC_ALL: "C", LVM_SUPPRESS_FD_WARNINGS: "1" };

/** @param {string[]} argv @param {number[]} okCodes exit codes that are not errors */
function run(argv, okCodes = [0]) {
  try {
    return execFileSync(/** @type {string} */ (argv[0]), argv.slice(1), {
      env,
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (e) {
    const err = /** @type {{ status?: number, stdout?: string, stderr?: string, code?: string }} */ (e);
    if (typeof err.status === "number" && okCodes.includes(err.status)) return err.stdout ?? "";
    if (err.code === "ENOENT") throw e;
    throw new Error(`${argv.join(" ")} exited ${err.status}: ${err.stderr ?? ""}`);
  }
}

/** Every device path in an lsblk --paths tree, in lsblk's order, once. @param {any[]} devices @param {string[]} into */
function devicePaths(devices, into) {
  for (const d of devices ?? []) {
    if (!into.includes(d.kname)) into.push(d.kname);
    devicePaths(d.children, into);
  }
  return into;
}

function lvmReport() {
  try {
    return JSON.parse(run(["lvm", "fullreport", "--reportformat", "json", "--units", "b", "--nosuffix"]));
  } catch (e) {
    if (/** @type {NodeJS.ErrnoException} */ (e).code === "ENOENT") return null;
    throw e;
  }
}

/** @param {string} file */
function read(file) {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/** @param {string} kname */
function sysfs(kname) {
  const dir = `/sys/class/block/${kname}`;
  /** @type {Record<string, string>} */
  const attrs = {};
  for (const a of SYSFS_ATTRIBUTES) {
    const v = read(`${dir}/${a}`);
    if (v !== undefined) attrs[a] = v;
  }
  attrs.holders = fs.readdirSync(`${dir}/holders`).join(" ");
  try {
    attrs["device/vpd_pg80 (hex)"] = fs.readFileSync(`${dir}/device/vpd_pg80`).toString("hex");
  } catch {
    /* not a SCSI device with a unit serial number page */
  }
  return attrs;
}

function links() {
  /** @type {Record<string, string>} */
  const out = {};
  const dirs = (fs.existsSync("/dev/disk") ? fs.readdirSync("/dev/disk") : [])
    .filter((d) => d.startsWith("by-"))
    .map((d) => `/dev/disk/${d}`)
    .sort();
  for (const dir of [...dirs, "/dev/mapper"]) {
    for (const entry of (fs.existsSync(dir) ? fs.readdirSync(dir) : []).sort()) {
      const link = `${dir}/${entry}`;
      if (!fs.lstatSync(link).isSymbolicLink()) continue; // without udev, /dev/mapper holds nodes, not links
      out[link] = path.resolve(dir, fs.readlinkSync(link));
    }
  }
  return out;
}

const name = os.hostname();
const labels = process.argv[2] ? JSON.parse(process.argv[2]) : { "kubernetes.io/hostname": name };
const lsblkPaths = JSON.parse(run(["lsblk", "--json", "--bytes", "--output-all", "--paths"]));
const lsblkPlain = JSON.parse(run(["lsblk", "--json", "--bytes", "--output-all"]));
const devices = devicePaths(lsblkPaths.blockdevices, []);

const signatures = [];
/** @type {Record<string, string>} */
const blkid = {};
for (const d of devices) {
  const text = run([
    "wipefs",
    "--json",
    "--no-act",
    "--output",
    "DEVICE,OFFSET,TYPE,UUID,LABEL,LENGTH,USAGE",
    d,
  ]);
  if (text.trim()) signatures.push(...JSON.parse(text).signatures);
  blkid[d] = run(["blkid", "-p", "-o", "export", d], [0, 2]);
}

const rest = {
  lvm: lvmReport(),
  signatures,
  probed: devices,
  blkid,
  sysfs: Object.fromEntries(devices.map((d) => [path.basename(d), sysfs(path.basename(d))])),
  links: links(),
  mounts: fs.readFileSync("/proc/self/mountinfo", "utf8"),
  swaps: fs.readFileSync("/proc/swaps", "utf8"),
};
const plain = { name, labels, lsblk: lsblkPlain, ...rest };
const paths = { name, labels, lsblk: lsblkPaths, ...rest };
process.stdout.write(JSON.stringify({ plain, paths }, null, 2) + "\n");
