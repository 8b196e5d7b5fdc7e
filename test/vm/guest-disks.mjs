// @ts-check
/**
 * Run inside the test guest: prints the whole disks the kernel sees, straight from sysfs, as JSON
 * `[{ kname, serial, wwid, sizeBytes }]`. The tests map their disks' serials to this boot's kernel
 * names with it, independently of the agent's own discovery (which is under test).
 *
 * The serial is virtio-blk's `serial` file or, for a scsi-hd, the unit serial number VPD page (0x80:
 * a 4-byte header, then the ASCII serial); the wwid is the SCSI `device/wwid` ("naa.<hex>").
 */
import fs from "node:fs";
import process from "node:process";

/** @param {string} file */
const read = (file) => {
  try {
    return fs.readFileSync(file);
  } catch {
    return undefined;
  }
};

const disks = fs
  .readdirSync("/sys/block")
  .filter((name) => !/^(loop|ram|dm-|sr)/.test(name))
  .sort()
  .map((kname) => {
    const dir = `/sys/block/${kname}`;
    let serial = read(`${dir}/serial`)?.toString("utf8").trim();
    const page = read(`${dir}/device/vpd_pg80`);
    if (!serial && page && page.length >= 4) {
      serial = page
        .subarray(4, 4 + page.readUInt16BE(2))
        .toString("latin1")
        .trim();
    }
    const wwid = read(`${dir}/device/wwid`)?.toString("utf8").trim();
    const sectors = Number(read(`${dir}/size`)?.toString("utf8").trim() ?? "0");
    return { kname: `/dev/${kname}`, serial: serial || null, wwid: wwid || null, sizeBytes: sectors * 512 };
  });
process.stdout.write(`${JSON.stringify(disks)}\n`);
