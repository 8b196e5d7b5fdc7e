import { discoverNode, type DiscoveryDeps } from "./discover";
import type { FileStamp } from "./discovery-deps";
import { DiscoveryCache, signatureKey } from "./probe-cache";

/*
 * The discovery cache with an injected machine: a small kernel of files (sysfs, device nodes, a loop
 * backing file) the tests change as a writer would, and the probe commands answering from it.
 * test/inventory/probe-cache.test.ts does the same with real tools on loop devices.
 */

interface FakeDevice {
  name: string;
  type: "loop" | "disk" | "part";
  disk?: string;
  signatures: Array<{ type: string; offset: string }>;
  /** write I/Os, write sectors, in flight, discard I/Os, discard sectors */
  writes: number;
  sectors: number;
  inFlight: number;
  discards: number;
  diskseq?: number;
  node: FileStamp;
  backing?: string;
  iostats?: string;
  serial?: string;
  holders?: string[];
}

function stamp(over: Partial<FileStamp> = {}): FileStamp {
  return { type: "block-device", ino: "100", size: "0", mtimeNs: "1", ctimeNs: "1", ...over };
}

function machine() {
  const devices = new Map<string, FakeDevice>();
  const add = (d: Partial<FakeDevice> & Pick<FakeDevice, "name" | "type">) =>
    devices.set(d.name, {
      signatures: [],
      writes: 0,
      sectors: 0,
      inFlight: 0,
      discards: 0,
      node: stamp(),
      ...d,
    });
  add({ name: "loop0", type: "loop", diskseq: 10, backing: "/img/0", serial: "S0" });
  add({
    name: "loop1",
    type: "loop",
    diskseq: 11,
    backing: "/img/1",
    signatures: [{ type: "ext4", offset: "0x438" }],
  });
  add({ name: "vdb", type: "disk", diskseq: 12, serial: "VDB" });
  add({ name: "vdb1", type: "part", disk: "vdb" });
  const files = new Map<string, FileStamp>([
    ["/img/0", stamp({ type: "file", ino: "7", mtimeNs: "5" })],
    ["/img/1", stamp({ type: "file", ino: "8", mtimeNs: "5" })],
  ]);
  /** Device-mapper devices stacked on the devices above (not probed): their write counts and slaves. */
  const stacked = new Map<string, { writes: number; inFlight: number; slaves: string[] }>();
  const calls: string[][] = [];
  const reads: string[] = [];
  const sysfs = (path: string): string | undefined => {
    const m = /^\/sys\/class\/block\/([^/]+)\/(.+)$/.exec(path);
    const dm = m && stacked.get(m[1]!);
    if (dm && m[2] === "stat")
      return `0 0 0 0 ${dm.writes} 0 ${dm.writes * 8} 0 ${dm.inFlight} 0 0 0 0 0 0 0 0\n`;
    const d = m && devices.get(m[1]!);
    if (!m || !d) return undefined;
    const index = [...devices.keys()].indexOf(d.name);
    const stat = [
      0,
      0,
      0,
      0,
      d.writes,
      0,
      d.sectors,
      0,
      d.inFlight,
      0,
      0,
      d.discards,
      0,
      d.discards * 8,
      0,
      0,
      0,
    ];
    const attrs: Record<string, string | undefined> = {
      dev: `${d.type === "loop" ? 7 : 252}:${index}\n`,
      size: "2048\n",
      stat: `${stat.join(" ")}\n`,
      diskseq: d.diskseq === undefined ? undefined : `${d.diskseq}\n`,
      "queue/iostats": d.type === "part" ? undefined : `${d.iostats ?? "1"}\n`,
      "loop/backing_file": d.backing ? `${d.backing}\n` : undefined,
      "loop/offset": d.backing ? "0\n" : undefined,
      start: d.type === "part" ? "2048\n" : undefined,
      partition: d.type === "part" ? "1\n" : undefined,
      serial: d.serial ? `${d.serial}\n` : undefined,
      ro: "0\n",
      removable: "0\n",
    };
    return attrs[m[2]!];
  };
  const deps: DiscoveryDeps = {
    async run(argv) {
      calls.push([...argv]);
      if (argv[0] === "lsblk") {
        const node = (d: FakeDevice) => ({ name: d.name, kname: d.name, type: d.type, size: 1048576 });
        const top = [...devices.values()].filter((d) => d.type !== "part");
        return {
          stdout: JSON.stringify({
            blockdevices: top.map((d) => ({
              ...node(d),
              children: [...devices.values()].filter((p) => p.disk === d.name).map(node),
            })),
          }),
        };
      }
      if (argv[0] === "wipefs") {
        const named = argv.filter((a) => a.startsWith("/dev/")).map((a) => a.slice(5));
        const signatures = named.flatMap((n) =>
          devices.get(n)!.signatures.map((s) => ({ device: n, offset: s.offset, type: s.type })),
        );
        return { stdout: JSON.stringify({ signatures }) };
      }
      if (argv[0] === "blkid") {
        const d = devices.get(argv.at(-1)!.slice(5))!;
        if (d.type === "part") return { stdout: `DEVNAME=/dev/${d.name}\nPART_ENTRY_NAME=data\n` };
        if (!d.signatures.length) throw Object.assign(new Error("blkid"), { code: 2 });
        return { stdout: `DEVNAME=/dev/${d.name}\nTYPE=${d.signatures[0]!.type}\n` };
      }
      if (argv[0] === "lvm") return { stdout: JSON.stringify({ report: [] }) };
      throw new Error(`unexpected ${argv.join(" ")}`);
    },
    async readFile(path) {
      reads.push(path);
      return path.startsWith("/sys/") ? sysfs(path) : path.startsWith("/proc/") ? "" : undefined;
    },
    readBytes: async () => undefined,
    async readdir(path) {
      const m = /^\/sys\/class\/block\/([^/]+)\/(holders|slaves)$/.exec(path);
      if (!m) return undefined;
      if (m[2] === "holders") return devices.get(m[1]!)?.holders ?? [];
      return stacked.get(m[1]!)?.slaves ?? [];
    },
    async readlink(path) {
      const d = devices.get(path.slice("/sys/class/block/".length));
      if (!d) return undefined;
      return d.disk
        ? `../../devices/virtual/block/${d.disk}/${d.name}`
        : `../../devices/virtual/block/${d.name}`;
    },
    async stamp(path) {
      if (path.startsWith("/dev/")) return devices.get(path.slice(5))?.node;
      return files.get(path);
    },
  };
  const probes = () => calls.filter((c) => c[0] === "wipefs" || c[0] === "blkid");
  const probedDevices = () =>
    [...new Set(probes().flatMap((c) => c.filter((a) => a.startsWith("/dev/"))))].sort();
  return {
    devices,
    stacked,
    files,
    deps,
    calls,
    reads,
    probes,
    probedDevices,
    reset: () => (calls.length = reads.length = 0),
  };
}

const opts = { node: "n1" };

describe("DiscoveryCache: signatures", () => {
  it("gives the same raw inventory as discovering without it, and probes nothing when nothing changed", async () => {
    const m = machine();
    const counts: string[] = [];
    const cache = new DiscoveryCache({ observe: (kind, result) => counts.push(`${kind}:${result}`) });
    const uncached = await discoverNode(m.deps, opts);
    const first = await discoverNode(m.deps, { ...opts, cache });
    m.reset();
    const second = await discoverNode(m.deps, { ...opts, cache });
    expect(first).toEqual(uncached);
    expect(second).toEqual(uncached);
    expect(JSON.stringify(second)).toBe(JSON.stringify(uncached));
    expect(m.probes()).toEqual([]);
    expect(counts.filter((c) => c.startsWith("signatures")).slice(4)).toEqual(
      Array(4).fill("signatures:hit"),
    );
    expect(counts.filter((c) => c.startsWith("signatures")).slice(0, 4)).toEqual(
      Array(4).fill("signatures:miss"),
    );
  });

  it.each<[string, (m: ReturnType<typeof machine>) => void, string[]]>([
    [
      "a completed write (wipefs -a, pvcreate, mkfs)",
      (m) => void (m.devices.get("loop0")!.writes += 1),
      ["/dev/loop0"],
    ],
    ["more sectors written", (m) => void (m.devices.get("loop0")!.sectors += 8), ["/dev/loop0"]],
    ["a discard (blkdiscard)", (m) => void (m.devices.get("loop0")!.discards += 1), ["/dev/loop0"]],
    [
      "a write through the page cache (the node's mtime)",
      (m) => (m.devices.get("loop0")!.node = stamp({ mtimeNs: "2" })),
      ["/dev/loop0"],
    ],
    [
      "a device node made again (another inode)",
      (m) => (m.devices.get("loop0")!.node = stamp({ ino: "101" })),
      ["/dev/loop0"],
    ],
    [
      "another medium or loop attach (diskseq)",
      (m) => void (m.devices.get("loop1")!.diskseq = 99),
      ["/dev/loop1"],
    ],
    [
      "a write to the loop device's backing file",
      (m) => m.files.set("/img/1", stamp({ type: "file", ino: "8", mtimeNs: "6" })),
      ["/dev/loop1"],
    ],
    // A new partition table is written to the disk: the partition's blkid (its table entry) changes.
    [
      "a write to a partition's disk",
      (m) => void (m.devices.get("vdb")!.writes += 1),
      ["/dev/vdb", "/dev/vdb1"],
    ],
    [
      "a write to a partition (counted on it)",
      (m) => void (m.devices.get("vdb1")!.writes += 1),
      ["/dev/vdb1"],
    ],
  ])("misses after %s, on that device only", async (_what, change, reprobed) => {
    const m = machine();
    const cache = new DiscoveryCache();
    await discoverNode(m.deps, { ...opts, cache });
    change(m);
    m.reset();
    await discoverNode(m.deps, { ...opts, cache });
    expect(m.probedDevices()).toEqual(reprobed);
  });

  it("misses after a write through another device stacked with it (the other path of a multipath disk)", async () => {
    const m = machine();
    // dm-0 (multipath) holds loop0 and loop1 as two paths to one disk.
    m.stacked.set("dm-0", { writes: 0, inFlight: 0, slaves: ["loop0", "loop1"] });
    m.devices.get("loop0")!.holders = ["dm-0"];
    m.devices.get("loop1")!.holders = ["dm-0"];
    const cache = new DiscoveryCache();
    await discoverNode(m.deps, { ...opts, cache });
    m.reset();
    await discoverNode(m.deps, { ...opts, cache });
    expect(m.probes()).toEqual([]);
    m.devices.get("loop1")!.writes += 1; // written through the other path: loop0's own counters stand still
    m.reset();
    await discoverNode(m.deps, { ...opts, cache });
    expect(m.probedDevices()).toEqual(["/dev/loop0", "/dev/loop1"]);
    m.stacked.get("dm-0")!.writes += 1; // through the multipath device
    m.reset();
    await discoverNode(m.deps, { ...opts, cache });
    expect(m.probedDevices()).toEqual(["/dev/loop0", "/dev/loop1"]);
    m.stacked.get("dm-0")!.inFlight = 1; // a request in flight on the stack: nothing kept
    m.reset();
    await discoverNode(m.deps, { ...opts, cache });
    m.reset();
    await discoverNode(m.deps, { ...opts, cache });
    expect(m.probedDevices()).toEqual(["/dev/loop0", "/dev/loop1"]);
  });

  it("shows what was written behind its back: the new signature, not the cached blank", async () => {
    const m = machine();
    const cache = new DiscoveryCache();
    const before = await discoverNode(m.deps, { ...opts, cache });
    expect(before.signatures).toEqual([{ device: "loop1", offset: "0x438", type: "ext4" }]);
    const loop0 = m.devices.get("loop0")!;
    loop0.signatures = [{ type: "LVM2_member", offset: "0x218" }];
    loop0.writes += 2;
    loop0.sectors += 16;
    const after = await discoverNode(m.deps, { ...opts, cache });
    expect(after.signatures).toContainEqual({ device: "loop0", offset: "0x218", type: "LVM2_member" });
    expect(after.blkid!["/dev/loop0"]).toContain("TYPE=LVM2_member");
  });

  it("a weaker key (major:minor and size) would hide it: the reason for the key", async () => {
    const m = machine();
    const naive = new DiscoveryCache({
      signatureKey: async (deps, name) => ({
        key: `${await deps.readFile(`/sys/class/block/${name}/dev`)}${await deps.readFile(`/sys/class/block/${name}/size`)}`,
        disk: name,
      }),
    });
    await discoverNode(m.deps, { ...opts, cache: naive });
    const loop0 = m.devices.get("loop0")!;
    loop0.signatures = [{ type: "LVM2_member", offset: "0x218" }];
    loop0.writes += 2;
    const after = await discoverNode(m.deps, { ...opts, cache: naive });
    expect(after.signatures!.some((s) => (s as { device: string }).device === "loop0")).toBe(false);
  });

  it.each<[string, (m: ReturnType<typeof machine>) => void]>([
    ["a request is in flight", (m) => void (m.devices.get("loop0")!.inFlight = 1)],
    ["the queue does not count I/O (iostats 0)", (m) => void (m.devices.get("loop0")!.iostats = "0")],
    ["the backing file cannot be looked at", (m) => m.files.delete("/img/0")],
    ["the backing file is a block device", (m) => m.files.set("/img/0", stamp({ type: "block-device" }))],
    ["the device node is missing", (m) => void (m.devices.get("loop0")!.node = stamp({ type: "other" }))],
  ])("caches nothing for a device when %s", async (_what, change) => {
    const m = machine();
    change(m);
    const cache = new DiscoveryCache();
    await discoverNode(m.deps, { ...opts, cache });
    m.reset();
    await discoverNode(m.deps, { ...opts, cache });
    expect(m.probedDevices()).toEqual(["/dev/loop0"]);
  });

  it("caches nothing without a stamp dep", async () => {
    const m = machine();
    const { stamp: _unused, ...deps } = m.deps;
    const cache = new DiscoveryCache();
    await discoverNode(deps, { ...opts, cache });
    m.reset();
    await discoverNode(deps, { ...opts, cache });
    expect(m.probedDevices()).toEqual(["/dev/loop0", "/dev/loop1", "/dev/vdb", "/dev/vdb1"]);
  });

  it("keeps no probe when the device's key changed while it was probed (a write completed meanwhile)", async () => {
    const m = machine();
    const cache = new DiscoveryCache();
    const run = m.deps.run;
    const deps: DiscoveryDeps = {
      ...m.deps,
      run: async (argv) => {
        const out = await run(argv);
        if (argv[0] === "wipefs" && argv.includes("/dev/loop0")) m.devices.get("loop0")!.writes += 1;
        return out;
      },
    };
    await discoverNode(deps, { ...opts, cache, probeConcurrency: 1 });
    m.reset();
    await discoverNode(m.deps, { ...opts, cache });
    expect(m.probedDevices()).toEqual(["/dev/loop0"]);
  });

  it("keeps no failed probe", async () => {
    const m = machine();
    const cache = new DiscoveryCache();
    const run = m.deps.run;
    let fail = true;
    const deps: DiscoveryDeps = {
      ...m.deps,
      run: async (argv) => {
        if (fail && argv[0] === "wipefs" && argv.includes("/dev/loop1"))
          throw new Error("wipefs: cannot open");
        return run(argv);
      },
    };
    const first = await discoverNode(deps, { ...opts, cache });
    expect(first.probeErrors?.["/dev/loop1"]).toBeDefined();
    fail = false;
    m.reset();
    const second = await discoverNode(deps, { ...opts, cache });
    expect(m.probedDevices()).toEqual(["/dev/loop1"]);
    expect(second.probeErrors).toBeUndefined();
  });

  it("forget drops a device, its partitions and a partition's disk", async () => {
    const m = machine();
    const cache = new DiscoveryCache();
    await discoverNode(m.deps, { ...opts, cache });
    cache.forget(["/dev/vdb1"]);
    m.reset();
    await discoverNode(m.deps, { ...opts, cache });
    expect(m.probedDevices()).toEqual(["/dev/vdb", "/dev/vdb1"]);
    cache.forget(["loop1"]);
    m.reset();
    await discoverNode(m.deps, { ...opts, cache });
    expect(m.probedDevices()).toEqual(["/dev/loop1"]);
    cache.forget();
    m.reset();
    await discoverNode(m.deps, { ...opts, cache });
    expect(m.probedDevices()).toEqual(["/dev/loop0", "/dev/loop1", "/dev/vdb", "/dev/vdb1"]);
  });

  it("does not use an entry older than maxAgeMs", async () => {
    const m = machine();
    let now = 0;
    const cache = new DiscoveryCache({ maxAgeMs: 1000, now: () => now });
    await discoverNode(m.deps, { ...opts, cache });
    now = 1000;
    m.reset();
    await discoverNode(m.deps, { ...opts, cache });
    expect(m.probes()).toEqual([]);
    now = 2001;
    m.reset();
    await discoverNode(m.deps, { ...opts, cache });
    expect(m.probedDevices()).toEqual(["/dev/loop0", "/dev/loop1", "/dev/vdb", "/dev/vdb1"]);
  });

  it("a partition's key holds its disk's", async () => {
    const m = machine();
    const part = await signatureKey(m.deps, "vdb1", true);
    const disk = await signatureKey(m.deps, "vdb", false);
    expect(part?.disk).toBe("vdb");
    expect(part?.key).toContain(disk!.key);
  });
});

describe("DiscoveryCache: static sysfs attributes", () => {
  it("reads the static attributes once per device identity, the others every time", async () => {
    const m = machine();
    const cache = new DiscoveryCache();
    const first = await discoverNode(m.deps, { ...opts, cache });
    m.reset();
    const second = await discoverNode(m.deps, { ...opts, cache });
    expect(second.sysfs).toEqual(first.sysfs);
    expect(JSON.stringify(second.sysfs)).toBe(JSON.stringify(first.sysfs));
    expect(m.reads).not.toContain("/sys/class/block/loop0/serial");
    expect(m.reads).not.toContain("/sys/class/block/loop0/device/model");
    expect(m.reads).toContain("/sys/class/block/loop0/ro");
    expect(m.reads).toContain("/sys/class/block/loop0/queue/rotational");
    m.devices.get("loop0")!.diskseq = 50; // another medium behind the name
    m.devices.get("loop0")!.serial = "S0-NEW";
    m.reset();
    const third = await discoverNode(m.deps, { ...opts, cache });
    expect(m.reads).toContain("/sys/class/block/loop0/serial");
    expect(third.sysfs!.loop0?.serial).toBe("S0-NEW\n");
  });
});
