/**
 * discoverNode on this machine's real tools, against two loop devices of its own: one blank, one a PV
 * of a VG tagged as ours. Discovery is restricted to those two devices, so other loops and volume
 * groups on the machine (other engineers', other tests') are never looked at. Needs root, losetup and
 * lvm2; when it cannot create its loop devices it fails, it does not skip.
 */
import { execFile } from "node:child_process";
import {
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmdirSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { promisify } from "node:util";
import { compareNatural } from "../../src/inventory/device-path";
import { discoverNode, type DiscoveryDeps } from "../../src/inventory/discover";
import { parseNodeInventory } from "../../src/inventory/parse";
import { OWNER_TAG } from "../../src/inventory/types";
import { wipefsArgv } from "../../src/inventory/wipefs";

const exec = promisify(execFile);
const env = { ...process.env, LC_ALL: "C", LVM_SUPPRESS_FD_WARNINGS: "1" };
const dir = `/var/tmp/inv-fixtures/it-${process.pid}`;
const vg = `inv-fixture-it-${process.pid}`;
const noBackup = ["--config", "backup { backup = 0 archive = 0 }"];
const MiB = 1024 ** 2;

/** The real machine, as discovery sees it. */
const machine: DiscoveryDeps = {
  async run(argv) {
    try {
      const { stdout } = await exec(argv[0]!, argv.slice(1), { env, maxBuffer: 64 * MiB, timeout: 60_000 });
      return { stdout };
    } catch (err) {
      const e = err as Error & { code?: unknown; stderr?: string };
      throw Object.assign(new Error(`${e.message.trim()}${e.stderr ? `: ${e.stderr.trim()}` : ""}`), {
        code: e.code,
      });
    }
  },
  async readFile(path) {
    return ifExists(() => readFileSync(path, "utf8"));
  },
  async readBytes(path) {
    return ifExists(() => readFileSync(path));
  },
  async readdir(path) {
    return ifExists(() => readdirSync(path));
  },
  async readlink(path) {
    return ifExists(() => readlinkSync(path));
  },
};

function ifExists<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "EINVAL" || code === "ENOTDIR" || code === "ENOTEMPTY")
      return undefined;
    throw err;
  }
}

async function sh(argv: string[]): Promise<string> {
  return (await machine.run(argv)).stdout.trim();
}

let blank = "";
let pv = "";

beforeAll(async () => {
  mkdirSync(dir, { recursive: true });
  for (const [file, size] of [
    ["blank.img", 256 * MiB],
    ["pv.img", 128 * MiB],
  ] as const) {
    writeFileSync(`${dir}/${file}`, "");
    truncateSync(`${dir}/${file}`, size);
  }
  blank = await sh(["losetup", "--find", "--show", `${dir}/blank.img`]);
  pv = await sh(["losetup", "--find", "--show", `${dir}/pv.img`]);
  if (!/^\/dev\/loop\d+$/.test(blank) || !/^\/dev\/loop\d+$/.test(pv))
    throw new Error(`losetup printed ${blank} / ${pv}`);
  await sh(["pvcreate", ...noBackup, "--devices", pv, pv]);
  await sh(["vgcreate", ...noBackup, "--devices", pv, "--addtag", OWNER_TAG, vg, pv]);
}, 60_000);

afterAll(async () => {
  const problems: string[] = [];
  const attempt = async (argv: string[]) => {
    try {
      await sh(argv);
    } catch (err) {
      problems.push((err as Error).message);
    }
  };
  if (pv) {
    await attempt(["vgremove", ...noBackup, "-f", "--devices", pv, vg]);
    await attempt(["pvremove", ...noBackup, "--devices", pv, pv]);
    await attempt(["losetup", "--detach", pv]);
  }
  if (blank) await attempt(["losetup", "--detach", blank]);
  rmSync(dir, { recursive: true, force: true });
  ifExists(() => rmdirSync("/var/tmp/inv-fixtures")); // only when empty: record.sh may be using it
  for (const f of ifExists(() => readdirSync("/etc/lvm/archive")) ?? [])
    if (f.startsWith(`${vg}_`)) rmSync(`/etc/lvm/archive/${f}`);
  if (problems.length) throw new Error(`cleanup failed:\n${problems.join("\n")}`);
}, 60_000);

describe("discoverNode on real loop devices", () => {
  it("sees exactly its two devices: the blank one empty, the PV with its signature, VG and tag", async () => {
    const raw = await discoverNode(machine, { node: "it", devices: [blank, pv] });
    const inv = parseNodeInventory(raw);

    expect(inv.devices.map((d) => d.kname).sort()).toEqual([blank, pv].sort());
    const byKname = new Map(inv.devices.map((d) => [d.kname, d]));
    expect(byKname.get(blank)).toMatchObject({
      type: "loop",
      size: 256 * MiB,
      signatures: [],
      probed: true,
      readOnly: false,
      children: [],
      mountpoints: [],
      backingFile: `${dir}/blank.img`,
    });
    const pvDevice = byKname.get(pv)!;
    expect(pvDevice).toMatchObject({ size: 128 * MiB, probed: true, backingFile: `${dir}/pv.img` });
    expect(pvDevice.signatures).toEqual([
      expect.objectContaining({ type: "LVM2_member", offset: "0x218", usage: "raid" }),
    ]);

    expect(inv.pvs).toEqual([
      expect.objectContaining({ device: pv, vgName: vg, uuid: pvDevice.signatures[0]!.uuid }),
    ]);
    expect(inv.vgs).toEqual([expect.objectContaining({ name: vg, tags: [OWNER_TAG], extentSize: 4 * MiB })]);
    expect(inv.vgs[0]!.size).toBe(inv.vgs[0]!.extentCount * 4 * MiB);
    expect(inv.lvs).toEqual([]);
  }, 60_000);

  it("with probeConcurrency 1, lists both devices with one wipefs call, and sees the same", async () => {
    const calls: string[][] = [];
    const recording: DiscoveryDeps = {
      ...machine,
      run: (argv) => (calls.push([...argv]), machine.run(argv)),
    };
    const grouped = await discoverNode(recording, { node: "it", devices: [blank, pv], probeConcurrency: 1 });
    const alone = await discoverNode(machine, { node: "it", devices: [blank, pv], probeConcurrency: 2 });
    const wipefs = calls.filter((a) => a[0] === "wipefs").map((a) => a.filter((w) => w.startsWith("/dev/")));
    expect(wipefs).toEqual([[blank, pv].sort(compareNatural)]);
    expect(grouped.probed).toEqual([blank, pv].sort(compareNatural));
    expect(parseNodeInventory(grouped)).toEqual(parseNodeInventory(alone));
  }, 60_000);

  it("wipefs over several devices fails as a whole and prints nothing when one cannot be probed (so discovery then probes each alone)", async () => {
    const missing = `${dir}/missing.img`;
    const argv = [...wipefsArgv(pv).slice(0, -1), pv, missing, blank];
    await expect(exec(argv[0]!, argv.slice(1), { env })).rejects.toMatchObject({
      code: 1,
      stdout: "",
      stderr: expect.stringContaining(missing),
    });
  }, 60_000);
});
