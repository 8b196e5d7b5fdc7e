/**
 * The discovery cache (src/inventory/probe-cache.ts) on this machine's real kernel and tools, against
 * loop devices of its own: what is written behind the cache's back (wipefs -a, pvcreate, mkfs.ext4, a
 * write to the loop device's backing file, a write still in the page cache of a device kept open)
 * makes it probe that device again, and shows; a cache keyed on (major:minor, size) alone hides it.
 * Nothing changed: nothing probed. On a loop device every write also moves the backing file's mtime,
 * so the write counters' own part of the key is shown by src/inventory/probe-cache.test.ts (removing
 * the node's or the backing file's stamp from the key fails the page-cache and backing-file cases
 * here). Needs root, losetup, lvm2, e2fsprogs and util-linux; when it cannot
 * create its loop devices it fails, it does not skip.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import { promisify } from "node:util";
import { hostDiscoveryDeps } from "../../src/agent/discovery";
import type { Runner } from "../../src/agent/lvm-runner";
import { discoverNode } from "../../src/inventory/discover";
import type { DiscoveryDeps } from "../../src/inventory/discovery-deps";
import { type CachedProbe, DiscoveryCache, type SignatureKey } from "../../src/inventory/probe-cache";
import type { RawNodeInventory } from "../../src/inventory/types";

const exec = promisify(execFile);
const env = { ...process.env, LC_ALL: "C", LVM_SUPPRESS_FD_WARNINGS: "1" };
const dir = `/var/tmp/probe-cache-it-${process.pid}`;
const noBackup = ["--config", "backup { backup = 0 archive = 0 }"];
const MiB = 1024 ** 2;
const COUNT = 4;

/** Every command this test's discoveries ran. */
const ran: string[][] = [];
const run: Runner = async (argv) => {
  ran.push([...argv]);
  const started = Date.now();
  try {
    const { stdout, stderr } = await exec(argv[0]!, argv.slice(1), { env, maxBuffer: 64 * MiB });
    return { argv, stdout, stderr, durationMs: Date.now() - started };
  } catch (err) {
    const e = err as Error & { code?: unknown; stderr?: string };
    throw Object.assign(new Error(`${argv.join(" ")}: ${e.stderr?.trim() ?? e.message}`), {
      exitCode: e.code,
    });
  }
};
const deps: DiscoveryDeps = hostDiscoveryDeps(run);

async function sh(...argv: string[]): Promise<string> {
  return (await exec(argv[0]!, argv.slice(1), { env })).stdout.trim();
}

let loops: string[] = [];

beforeAll(async () => {
  fs.mkdirSync(dir, { recursive: true });
  for (let i = 0; i < COUNT; i++) {
    fs.writeFileSync(`${dir}/${i}.img`, "");
    fs.truncateSync(`${dir}/${i}.img`, 64 * MiB);
    loops.push(await sh("losetup", "--find", "--show", `${dir}/${i}.img`));
  }
  if (!loops.every((l) => /^\/dev\/loop\d+$/.test(l))) throw new Error(`losetup printed ${loops.join(", ")}`);
}, 60_000);

afterAll(async () => {
  const problems: string[] = [];
  for (const l of loops) {
    await sh("pvremove", ...noBackup, "-ff", "-y", "--devices", l, l).catch(() => undefined);
    await sh("losetup", "--detach", l).catch((e: Error) => problems.push(e.message));
  }
  loops = [];
  fs.rmSync(dir, { recursive: true, force: true });
  if (problems.length) throw new Error(`cleanup failed:\n${problems.join("\n")}`);
}, 60_000);

const probes = () => ran.filter((a) => a[0] === "wipefs" || a[0] === "blkid");
const probedDevices = () =>
  [...new Set(probes().flatMap((a) => a.filter((w) => w.startsWith("/dev/"))))].sort();
const typesOn = (raw: RawNodeInventory, device: string) =>
  (raw.signatures as Array<{ device: string; type: string }>)
    .filter((s) => `/dev/${s.device}` === device)
    .map((s) => s.type);

/**
 * The cache, remembering the key each device's last lookup was made under and the key each probe was
 * stored under. Another test on this machine reading every block device (an lvm scan, blkid) leaves
 * a read in flight on ours now and then: a device with a request in flight has no key, so its probe
 * is not stored, or not used, and it is probed again (the safe side).
 */
class KeyedCache extends DiscoveryCache {
  readonly looked = new Map<string, string | undefined>();
  readonly stored = new Map<string, string>();
  override probe(name: string, key: string | undefined) {
    this.looked.set(name, key);
    return super.probe(name, key);
  }
  override storeProbe(name: string, key: SignatureKey, probe: CachedProbe) {
    this.stored.set(name, key.key);
    super.storeProbe(name, key, probe);
  }
}

/**
 * The devices besides `device` probed again in the last discovery though their probe was stored
 * (`stored`, taken before it) and their key could be read: a key that changed on a device nobody
 * wrote. None may be.
 */
function probedBesides(device: string, cache: KeyedCache, stored: ReadonlyMap<string, string>) {
  return probedDevices()
    .filter((d) => d !== device)
    .map((d) => ({ device: d, stored: stored.get(d.slice(5)), now: cache.looked.get(d.slice(5)) }))
    .filter((p) => p.stored !== undefined && p.now !== undefined);
}

/** A cache keyed on what does not change when a device is written: the key this cache must not have. */
function naiveCache(): DiscoveryCache {
  return new DiscoveryCache({
    signatureKey: async (d, name) => ({
      key: `${await d.readFile(`/sys/class/block/${name}/dev`)} ${await d.readFile(`/sys/class/block/${name}/size`)}`,
      disk: name,
    }),
  });
}

async function discover(cache: DiscoveryCache | undefined): Promise<RawNodeInventory> {
  ran.length = 0;
  return discoverNode(deps, { node: "it", devices: loops, ...(cache ? { cache } : {}) });
}

describe("the discovery cache on real loop devices", () => {
  it("probes nothing again when nothing changed, and gives what probing gives", async () => {
    const cache = new KeyedCache();
    const first = await discover(cache);
    expect(probedDevices()).toEqual([...loops].sort());
    const stored = new Map(cache.stored);
    const second = await discover(cache);
    expect(probedBesides("", cache, stored)).toEqual([]);
    const uncached = await discover(undefined);
    expect(second.signatures).toEqual(uncached.signatures);
    expect(second.blkid).toEqual(uncached.blkid);
    expect(second.sysfs).toEqual(uncached.sysfs);
    expect(second.probed).toEqual(first.probed);
  }, 60_000);

  it.each<[string, (device: string, index: number) => Promise<unknown>, string[], string[]]>([
    ["pvcreate", (d) => sh("pvcreate", ...noBackup, "-ff", "-y", "--devices", d, d), [], ["LVM2_member"]],
    ["wipefs -a", (d) => sh("wipefs", "-a", d), ["LVM2_member"], []],
    ["mkfs.ext4", (d) => sh("mkfs.ext4", "-q", "-F", d), [], ["ext4"]],
    ["wipefs -a again", (d) => sh("wipefs", "-a", d), ["ext4"], []],
    [
      "mkfs.ext4 through another device node (a container's own /dev), which leaves /dev/loopN's mtime alone",
      async (d) => {
        const [major, minor] = fs
          .readFileSync(`/sys/class/block/${d.slice(5)}/dev`, "utf8")
          .trim()
          .split(":");
        await sh("mknod", `${dir}/other-node`, "b", major!, minor!);
        try {
          // Without its discard (which the discard counters see): writes only.
          await sh("mkfs.ext4", "-q", "-F", "-E", "nodiscard", `${dir}/other-node`);
        } finally {
          fs.rmSync(`${dir}/other-node`);
        }
      },
      [],
      ["ext4"],
    ],
    [
      "a write to the loop device's backing file (not through the device)",
      async (_d, i) => {
        const fd = fs.openSync(`${dir}/${i}.img`, "r+");
        fs.writeSync(fd, Buffer.alloc(64 * 1024), 0, 64 * 1024, 0); // the ext4 superblock is at 1024
        fs.fsyncSync(fd);
        fs.closeSync(fd);
      },
      ["ext4"],
      [],
    ],
  ])(
    "after %s behind its back, probes that device again and shows it; a (major:minor, size) key would not",
    async (_what, write, before, after) => {
      const device = loops[0]!;
      const cache = new KeyedCache();
      const naive = naiveCache();
      expect(typesOn(await discover(cache), device)).toEqual(before);
      const stored = new Map(cache.stored);
      expect(typesOn(await discover(naive), device)).toEqual(before);
      // The loop device's own page cache is dropped on its last close; the backing file is written
      // through its own, which the loop device reads.
      await write(device, 0);
      const fresh = await discover(cache);
      expect(probedDevices()).toContain(device);
      expect(probedBesides(device, cache, stored)).toEqual([]);
      expect(typesOn(fresh, device)).toEqual(after);
      const stale = await discover(naive);
      expect(probes()).toEqual([]);
      expect(typesOn(stale, device)).toEqual(before); // hidden: why the key holds the write counters
    },
    60_000,
  );

  it("a write still in the page cache of a device kept open: its node's mtime changed, so it misses", async () => {
    const device = loops[1]!;
    const cache = new KeyedCache();
    expect(typesOn(await discover(cache), device)).toEqual([]);
    const stored = new Map(cache.stored);
    // mkswap's first page, written through this process's file descriptor without a sync: the block
    // layer's counters see it only at writeback or last close.
    const image = `${dir}/swap-source.img`;
    fs.writeFileSync(image, "");
    fs.truncateSync(image, 1 * MiB);
    await sh("mkswap", image);
    const page = fs.readFileSync(image).subarray(0, 4096);
    const fd = fs.openSync(device, "r+");
    try {
      fs.writeSync(fd, page, 0, page.length, 0);
      const fresh = await discover(cache);
      expect(probedDevices()).toContain(device);
      expect(probedBesides(device, cache, stored)).toEqual([]);
      expect(typesOn(fresh, device)).toEqual(["swap"]);
    } finally {
      fs.closeSync(fd);
    }
    await sh("wipefs", "-a", device);
  }, 60_000);
});
