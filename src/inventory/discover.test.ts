import fc from "fast-check";
import { loadRawFixture } from "../../test/fixtures/inventory/load";
import {
  attribute,
  contiguousGroups,
  DEFAULT_PROBE_CONCURRENCY,
  discoverNode,
  limiter,
  type DiscoveryDeps,
} from "./discover";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseNodeInventory } from "./parse";
import type { RawNodeInventory } from "./types";

/**
 * A fake machine that answers like the one host-loop-mixed was recorded on: lsblk --paths, wipefs (one
 * or several devices per call, like wipefs: entries of every device named), blkid per device, lvm
 * fullreport, sysfs files, plus mounts that are none of the inventory's business. Its root is an overlay
 * (as in a container): a `/dev/...` root that lsblk does not list would leave the root disk unknown, and
 * the planner then refuses every device (docs/device-selection.md).
 */
function recordedMachine(over: Partial<DiscoveryDeps> = {}) {
  const paths = loadRawFixture("host-loop-mixed-paths");
  const full = loadRawFixture("host-loop-mixed");
  const calls: string[][] = [];
  const hostMounts = "22 27 0:21 / /proc rw,relatime - proc proc rw\n25 1 0:30 / / rw - overlay overlay rw\n";
  const files: Record<string, string> = {
    "/proc/self/mountinfo": hostMounts + paths.mounts,
    "/proc/swaps": `${paths.swaps}/dev/zram0 partition 8388604 0 100\n`,
  };
  for (const [k, attrs] of Object.entries(paths.sysfs ?? {})) {
    for (const [attr, value] of Object.entries(attrs))
      if (attr !== "holders") files[`/sys/class/block/${k}/${attr}`] = value;
  }
  const deps: DiscoveryDeps = {
    async run(argv) {
      calls.push([...argv]);
      const device = argv.at(-1)!;
      switch (argv[0]) {
        case "lsblk": {
          const all = (paths.lsblk as { blockdevices: { name: string }[] }).blockdevices;
          const wanted = argv.slice(5);
          const blockdevices = wanted.length ? all.filter((d) => wanted.includes(d.name)) : all;
          return { stdout: JSON.stringify({ blockdevices }, null, 3) };
        }
        case "wipefs": {
          const named = wipefsDevices(argv);
          const signatures = (paths.signatures as { device: string }[]).filter((s) =>
            named.includes(`/dev/${s.device}`),
          );
          return { stdout: JSON.stringify({ signatures }) };
        }
        case "blkid": {
          const text = paths.blkid?.[device];
          if (text) return { stdout: text };
          throw Object.assign(new Error("Command failed: blkid"), { code: 2 });
        }
        case "lvm":
          return { stdout: JSON.stringify(full.lvm) };
      }
      throw new Error(`unexpected command ${argv.join(" ")}`);
    },
    async readFile(path) {
      return files[path];
    },
    async readBytes() {
      return undefined;
    },
    async readdir(path) {
      const holders = /^\/sys\/class\/block\/([^/]+)\/holders$/.exec(path);
      if (holders) return paths.sysfs?.[holders[1]!]?.holders?.split(" ").filter(Boolean) ?? undefined;
      if (path === "/dev/mapper") return ["control"];
      return undefined;
    },
    async readlink() {
      return undefined;
    },
    ...over,
  };
  return { deps, calls, recorded: paths };
}

/** The devices a wipefs argv names (after its options). */
function wipefsDevices(argv: readonly string[]): string[] {
  return argv.filter((a) => a.startsWith("/dev/"));
}

/** wipefs as it behaves on a device it cannot open: the whole call fails, printing nothing. */
function failingOn(device: string, run: DiscoveryDeps["run"]): DiscoveryDeps["run"] {
  return async (argv) => {
    if (argv[0] === "wipefs" && wipefsDevices(argv).includes(device))
      throw Object.assign(
        new Error(`exit status 1: wipefs: error: ${device}: probing initialization failed`),
        {
          exitCode: 1,
        },
      );
    return run(argv);
  };
}

describe("discoverNode: lvm's devices file", () => {
  const on = 'use_devicesfile=1\ndevicesfile="system.devices"\n';
  const listing =
    "  Device /dev/loop3 IDTYPE=loop_file IDNAME=/var/tmp/d0.img DEVNAME=/dev/loop3 PVID=2k8CWeUbmAYa4jl4c3eUKF8kztWmuzF0\n";
  function machine(config: string | Error, list: string | Error) {
    const { deps, calls } = recordedMachine();
    const run: DiscoveryDeps["run"] = async (argv) => {
      if (argv[0] === "lvm" && argv[1] === "config") {
        calls.push([...argv]);
        if (config instanceof Error) throw config;
        return { stdout: config };
      }
      if (argv[0] === "lvm" && argv[1] === "lvmdevices") {
        calls.push([...argv]);
        if (list instanceof Error) throw list;
        return { stdout: list };
      }
      return deps.run(argv);
    };
    return { deps: { ...deps, run }, calls };
  }

  it("reads the settings through lvm config and, when on, the entries through lvm lvmdevices", async () => {
    const { deps, calls } = machine(on, listing);
    const raw = await discoverNode(deps, { node: "n", devicesFile: true });
    expect(raw.devicesFile).toEqual({ config: on, list: listing });
    expect(calls.filter((a) => a[0] === "lvm" && a[1] !== "fullreport")).toEqual([
      ["lvm", "config", "--type", "full", "devices/use_devicesfile", "devices/devicesfile"],
      ["lvm", "lvmdevices"],
    ]);
    expect(parseNodeInventory(raw).devicesFile).toEqual({
      enabled: true,
      name: "system.devices",
      exists: true,
      entries: [
        {
          devname: "/dev/loop3",
          pvid: "2k8CWeUbmAYa4jl4c3eUKF8kztWmuzF0",
          idtype: "loop_file",
          idname: "/var/tmp/d0.img",
        },
      ],
    });
  });

  it("records a file lvm says does not exist as not existing (lvm then uses every device)", async () => {
    const gone = Object.assign(new Error("exit status 5:   Devices file does not exist."), { exitCode: 5 });
    const raw = await discoverNode(machine(on, gone).deps, { node: "n", devicesFile: true });
    expect(parseNodeInventory(raw).devicesFile).toMatchObject({ enabled: true, exists: false, entries: [] });
  });

  it("does not list entries when the file is off, and records nothing for an lvm without the setting", async () => {
    const off = machine('use_devicesfile=0\ndevicesfile="system.devices"\n', new Error("not asked"));
    expect((await discoverNode(off.deps, { node: "n", devicesFile: true })).devicesFile).toEqual({
      config: 'use_devicesfile=0\ndevicesfile="system.devices"\n',
      list: null,
    });
    expect(off.calls.some((a) => a[1] === "lvmdevices")).toBe(false);
    const old = new Error("exit status 5:   Configuration node devices/use_devicesfile not found");
    expect(
      (await discoverNode(machine(old, "").deps, { node: "n", devicesFile: true })).devicesFile,
    ).toBeUndefined();
  });

  it("fails naming lvm when the listing fails otherwise", async () => {
    const broken = new Error("exit status 5:   Failed to read the devices file.");
    await expect(discoverNode(machine(on, broken).deps, { node: "n", devicesFile: true })).rejects.toThrow(
      /devices file/,
    );
  });
});

describe("discoverNode against a fake of the recording machine", () => {
  it("collects raw output that parses to the same inventory as the recording", async () => {
    const { deps, recorded } = recordedMachine();
    const raw = await discoverNode(deps, { node: recorded.name, labels: recorded.labels });
    expect(parseNodeInventory(raw)).toEqual(parseNodeInventory(recorded));
    expect(raw.probed).toEqual(recorded.probed);
    expect(raw.sysfs).toEqual(recorded.sysfs);
    expect(raw.links).toEqual({});
  });

  it("runs only reading commands, as argv arrays, and wipefs never with -a", async () => {
    const { deps, calls } = recordedMachine();
    await discoverNode(deps, { node: "n" });
    const commands = new Set(calls.map((argv) => (argv[0] === "lvm" ? `lvm ${argv[1]}` : argv[0])));
    expect([...commands].sort()).toEqual(["blkid", "lsblk", "lvm fullreport", "wipefs"]);
    for (const argv of calls.filter((a) => a[0] === "wipefs")) {
      expect(argv).toContain("--no-act");
      expect(argv.some((a) => ["-a", "--all", "-f", "--force"].includes(a))).toBe(false);
    }
    expect(calls.filter((a) => a[0] === "blkid").every((a) => a[1] === "-p")).toBe(true);
  });

  it("probes whole devices and partitions, each once; blkid only partitions and devices with signatures", async () => {
    const { deps, calls, recorded } = recordedMachine();
    await discoverNode(deps, { node: "n" });
    expect(calls.filter((a) => a[0] === "wipefs").flatMap(wipefsDevices)).toEqual(recorded.probed);
    const signed = new Set((recorded.signatures as { device: string }[]).map((s) => `/dev/${s.device}`));
    const blkidAsked = recorded.probed!.filter((d) => signed.has(d) || /loop\d+p\d+$/.test(d));
    expect(blkidAsked).toEqual([
      "/dev/loop3",
      "/dev/loop4",
      "/dev/loop5",
      "/dev/loop5p1",
      "/dev/loop5p2",
      "/dev/loop7",
      "/dev/loop8",
      "/dev/loop9",
    ]);
    expect(calls.filter((a) => a[0] === "blkid").map((a) => a.at(-1))).toEqual(blkidAsked);
  });

  it("with an allow-list, asks lsblk and lvm about those devices only and filters mounts and swaps", async () => {
    const { deps, calls, recorded } = recordedMachine();
    const mounted = /\/dev\/loop\d+/.exec(recorded.mounts!)![0];
    const swap = /\/dev\/loop\d+/.exec(recorded.swaps!)![0];
    const raw = await discoverNode(deps, { node: "n", devices: [mounted, swap] });
    expect(calls[0]).toEqual(["lsblk", "--json", "--bytes", "--output-all", "--paths", mounted, swap]);
    const lvm = calls.find((a) => a[0] === "lvm")!;
    expect(lvm.slice(-2)).toEqual(["--devices", `${mounted},${swap}`]);
    expect(raw.probed).toEqual([mounted, swap]);
    expect(Object.keys(raw.sysfs ?? {})).toEqual([mounted, swap].map((d) => d.slice(5)));
    expect(raw.mounts).toBe(recorded.mounts);
    expect(raw.swaps).toBe(recorded.swaps);
  });

  it("with an allow-list naming a device that is gone, discovers the rest and names the missing one", async () => {
    const { deps, calls, recorded } = recordedMachine();
    const present = recorded.probed![0]!;
    const gone = "/dev/mapper/pulled-disk";
    // lsblk as util-linux 2.39 answers: the devices it found, exit 64 when some are missing, 32 when all are.
    const run: DiscoveryDeps["run"] = async (argv) => {
      if (argv[0] === "lsblk" && argv.includes(gone)) {
        const out = await deps.run(argv.filter((a) => a !== gone));
        const found = argv.length > 6;
        throw Object.assign(new Error(`lsblk exited ${found ? 64 : 32}`), {
          exitCode: found ? 64 : 32,
          stdout: found ? out.stdout : "",
        });
      }
      return deps.run(argv);
    };
    const raw = await discoverNode({ ...deps, run }, { node: "n", devices: [present, gone] });
    expect(raw.missingDevices).toEqual([gone]);
    expect(raw.probed).toEqual([present]);
    expect(calls.find((a) => a[0] === "lvm")!.slice(-2)).toEqual(["--devices", present]);
    expect(parseNodeInventory(raw).missingDevices).toEqual([gone]);
    // Any other lsblk failure still fails discovery, naming the command.
    const broken: DiscoveryDeps["run"] = async (argv) => {
      if (argv[0] === "lsblk") throw Object.assign(new Error("lsblk exited 1: bad usage"), { exitCode: 1 });
      return deps.run(argv);
    };
    await expect(
      discoverNode({ ...deps, run: broken }, { node: "n", devices: [present, gone] }),
    ).rejects.toThrow("lsblk exited 1");
  });

  it("reads the mount table it is told to (the host's, pid 1's, under nsenter)", async () => {
    const { deps, recorded } = recordedMachine();
    const mounted = /\/dev\/loop\d+/.exec(recorded.mounts!)![0];
    const read: string[] = [];
    const host = { "/proc/1/mountinfo": recorded.mounts!, "/proc/self/mountinfo": "" } as Record<
      string,
      string
    >;
    const readFile = async (path: string) => {
      read.push(path);
      return host[path] ?? (await deps.readFile(path));
    };
    const own = await discoverNode({ ...deps, readFile }, { node: "n", devices: [mounted] });
    expect(own.mounts).toBe("");
    const hosts = await discoverNode(
      { ...deps, readFile },
      { node: "n", devices: [mounted], mountinfo: "/proc/1/mountinfo" },
    );
    expect(hosts.mounts).toBe(recorded.mounts);
    expect(read.filter((p) => p.endsWith("mountinfo"))).toEqual([
      "/proc/self/mountinfo",
      "/proc/1/mountinfo",
    ]);
  });

  it("with an allow-list, keeps a root mount that names no device, so every candidate stays unsafe", async () => {
    const { deps, recorded } = recordedMachine();
    const mine = recorded.probed![0]!;
    const btrfsRoot = "29 1 0:33 /@ / rw,relatime - btrfs /dev/root rw,ssd,subvol=/@\n";
    const sda1Root = "29 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n";
    const withRoot = (root: string, sysDevBlock: Record<string, string>) =>
      discoverNode(
        {
          ...deps,
          readFile: async (path) => (path === "/proc/self/mountinfo" ? root : deps.readFile(path)),
          readlink: async (path) => sysDevBlock[path],
        },
        { node: "n", devices: [mine] },
      );
    // btrfs's anonymous device number names no block device: the root may be on any disk, ours too.
    const btrfs = await withRoot(btrfsRoot, {});
    expect(btrfs.mounts).toBe(btrfsRoot);
    expect(parseNodeInventory(btrfs).unresolvedRootMount).toEqual({
      source: "/dev/root",
      fstype: "btrfs",
      majMin: "0:33",
    });
    // A root on a real block device outside the list is not ours: filtered out as before.
    const other = await withRoot(sda1Root, {
      "/sys/dev/block/8:1": "../../devices/pci0000:00/block/sda/sda1",
    });
    expect(other.mounts).toBe("");
    expect(parseNodeInventory(other).unresolvedRootMount).toBeUndefined();
  });

  it("records a failed probe instead of failing, and reports that device as not probed", async () => {
    const { deps, recorded } = recordedMachine();
    const busy = recorded.probed![2]!;
    // blkid runs on a device with signatures (loop3; not on a blank whole device, see withBlkid).
    const blkidFails = "/dev/loop3";
    const run: DiscoveryDeps["run"] = async (argv) => {
      if (argv[0] === "wipefs" && wipefsDevices(argv).includes(busy))
        throw Object.assign(new Error("exit status 1: Device or resource busy"), { exitCode: 1 });
      if (argv[0] === "blkid" && argv.at(-1) === blkidFails)
        throw Object.assign(new Error("exit status 4: usage error"), { exitCode: 4 });
      return deps.run(argv);
    };
    const raw = await discoverNode({ ...deps, run }, { node: "n" });
    expect(raw.probeErrors).toEqual({
      [busy]: `wipefs --json --no-act --output DEVICE,OFFSET,TYPE,UUID,LABEL,LENGTH,USAGE ${busy}: exit status 1: Device or resource busy`,
      [blkidFails]: `blkid -p -o export ${blkidFails}: exit status 4: usage error`,
    });
    const inv = parseNodeInventory(raw);
    expect(inv.devices.filter((d) => !d.probed).map((d) => d.kname)).toEqual([busy, blkidFails]);
  });

  it("records lvm: null when lvm is not installed, and fails naming lvm when it fails otherwise", async () => {
    const { deps } = recordedMachine();
    const missing: DiscoveryDeps["run"] = async (argv) => {
      if (argv[0] === "lvm") throw Object.assign(new Error("spawn lvm ENOENT"), { code: "ENOENT" });
      return deps.run(argv);
    };
    expect((await discoverNode({ ...deps, run: missing }, { node: "n" })).lvm).toBeNull();
    const broken: DiscoveryDeps["run"] = async (argv) =>
      argv[0] === "lvm" ? { stdout: "  WARNING: locking failed" } : deps.run(argv);
    await expect(discoverNode({ ...deps, run: broken }, { node: "n" })).rejects.toThrow(
      "lvm fullreport --reportformat json --units b --nosuffix: printed something that is not JSON",
    );
  });

  it("reads udev links and device-mapper links, resolving relative targets, skipping /dev/mapper/control", async () => {
    const { deps, recorded } = recordedMachine();
    const [first, second] = recorded.probed as [string, string];
    const dirs: Record<string, string[]> = {
      "/dev/disk": ["by-id", "by-uuid"],
      "/dev/disk/by-id": ["wwn-0x1"],
      "/dev/disk/by-uuid": ["abc"],
      "/dev/mapper": ["control", "vg-lv"],
    };
    const links: Record<string, string> = {
      "/dev/disk/by-id/wwn-0x1": `../../${first.slice(5)}`,
      "/dev/disk/by-uuid/abc": `../../${second.slice(5)}`,
      "/dev/mapper/vg-lv": "../dm-7",
    };
    const fs = {
      readdir: async (p: string) => dirs[p] ?? (await deps.readdir(p)),
      readlink: async (p: string) => links[p],
    };
    expect((await discoverNode({ ...deps, ...fs }, { node: "n" })).links).toEqual({
      "/dev/disk/by-id/wwn-0x1": first,
      "/dev/disk/by-uuid/abc": second,
      "/dev/mapper/vg-lv": "/dev/dm-7",
    });
    expect((await discoverNode({ ...deps, ...fs }, { node: "n", devices: [second] })).links).toEqual({
      "/dev/disk/by-uuid/abc": second,
    });
  });

  it("refuses an empty allow-list (lsblk without arguments would list every device)", async () => {
    const { deps, calls } = recordedMachine();
    await expect(discoverNode(deps, { node: "edge-1", devices: [] })).rejects.toThrow(
      'node "edge-1": devices is an empty list',
    );
    expect(calls).toEqual([]);
  });

  it("fails naming lsblk when its output is not what lsblk prints", async () => {
    const { deps } = recordedMachine();
    const run: DiscoveryDeps["run"] = async (argv) =>
      argv[0] === "lsblk" ? { stdout: '{"devices": []}' } : deps.run(argv);
    await expect(discoverNode({ ...deps, run }, { node: "n" })).rejects.toThrow(
      'lsblk --json --bytes --output-all --paths: unexpected output: expected {"blockdevices": [...]}',
    );
  });
});

describe("discoverNode with an allow-list on a node whose logical volumes are active", () => {
  // Recorded in the qemu guest (test/vm) with a thin pool, thin volumes and a snapshot active on
  // /dev/sda and /dev/vdb: lsblk lists their device-mapper devices under the disks.
  const guest = JSON.parse(
    readFileSync(join(__dirname, "../../test/fixtures/inventory/guest-thin-paths.json"), "utf8"),
  ) as RawNodeInventory;

  it("asks lvm about the allowed devices (and partitions) only, not the device-mapper devices stacked on them", async () => {
    const calls: string[][] = [];
    const deps: DiscoveryDeps = {
      async run(argv) {
        calls.push([...argv]);
        switch (argv[0]) {
          case "lsblk": {
            const all = (guest.lsblk as { blockdevices: { name: string }[] }).blockdevices;
            return { stdout: JSON.stringify({ blockdevices: all.filter((d) => argv.includes(d.name)) }) };
          }
          case "wipefs":
            return { stdout: "" };
          case "blkid":
            throw Object.assign(new Error("Command failed: blkid"), { code: 2 });
          case "lvm":
            return { stdout: JSON.stringify(guest.lvm) };
        }
        throw new Error(`unexpected command ${argv.join(" ")}`);
      },
      readFile: async () => undefined,
      readBytes: async () => undefined,
      readdir: async () => undefined,
      readlink: async () => undefined,
    };
    const raw = await discoverNode(deps, { node: "n", devices: ["/dev/sda", "/dev/vdb", "/dev/vdc"] });
    // the stacked devices are listed (the planner sees what is on the disks) ...
    expect(JSON.stringify(raw.lsblk)).toContain("/dev/mapper/vgpl-pool0_tdata");
    // ... but lvm is only asked about the agent's own devices, as its runner requires
    const lvm = calls.find((a) => a[0] === "lvm")!;
    expect(lvm.slice(-2)).toEqual(["--devices", "/dev/sda,/dev/vdb,/dev/vdc"]);
  });

  it("records a SCSI disk's unit serial page as hex, and the parsed inventory takes the serial from it", async () => {
    const pages: Record<string, Buffer> = {};
    for (const [kname, attrs] of Object.entries(guest.sysfs ?? {})) {
      const hex = attrs["device/vpd_pg80 (hex)"];
      if (hex) pages[`/sys/class/block/${kname}/device/vpd_pg80`] = Buffer.from(hex, "hex");
    }
    expect(Object.keys(pages)).toEqual(["/sys/class/block/sda/device/vpd_pg80"]);
    const deps: DiscoveryDeps = {
      async run(argv) {
        if (argv[0] === "lsblk") {
          const all = (guest.lsblk as { blockdevices: { name: string }[] }).blockdevices;
          return { stdout: JSON.stringify({ blockdevices: all.filter((d) => d.name === "/dev/sda") }) };
        }
        if (argv[0] === "lvm") return { stdout: JSON.stringify({ report: [] }) };
        if (argv[0] === "wipefs") return { stdout: "" };
        throw Object.assign(new Error("Command failed: blkid"), { code: 2 });
      },
      readFile: async () => undefined,
      readBytes: async (path) => pages[path],
      readdir: async () => undefined,
      readlink: async () => undefined,
    };
    const raw = await discoverNode(deps, { node: "n", devices: ["/dev/sda"] });
    expect(raw.sysfs?.sda).toMatchObject({
      "device/vpd_pg80 (hex)": guest.sysfs!.sda!["device/vpd_pg80 (hex)"],
    });
    const sda = parseNodeInventory(raw).devices.find((d) => d.kname === "/dev/sda");
    expect(sda?.serial).toBe("SN-BBB222");
  });
});

/** `run` with every wipefs/blkid taking `ms` and a count of how many run at once. */
function slowProbes(run: DiscoveryDeps["run"], ms = 5) {
  const seen = { running: 0, max: 0 };
  const slow: DiscoveryDeps["run"] = async (argv) => {
    if (argv[0] !== "wipefs" && argv[0] !== "blkid") return run(argv);
    seen.running++;
    seen.max = Math.max(seen.max, seen.running);
    try {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return await run(argv);
    } finally {
      seen.running--;
    }
  };
  return { slow, seen };
}

/** A machine where wipefs takes one device per call (any other call fails): every device probed alone. */
function oneByOne(run: DiscoveryDeps["run"]): DiscoveryDeps["run"] {
  return async (argv) => {
    if (argv[0] === "wipefs" && wipefsDevices(argv).length !== 1)
      throw Object.assign(new Error("exit status 1: only one device"), { exitCode: 1 });
    return run(argv);
  };
}

describe("discoverNode's probes: grouped wipefs calls, bounded concurrency", () => {
  it(`lists the devices in ${DEFAULT_PROBE_CONCURRENCY} contiguous groups, one wipefs call each, entries on their own devices`, async () => {
    const { deps, calls, recorded } = recordedMachine();
    const raw = await discoverNode(deps, { node: recorded.name, labels: recorded.labels });
    const wipefs = calls.filter((a) => a[0] === "wipefs");
    expect(wipefs.map(wipefsDevices)).toEqual([0, 3, 6, 9].map((i) => recorded.probed!.slice(i, i + 3)));
    for (const argv of wipefs)
      expect(argv.slice(0, 5)).toEqual([
        "wipefs",
        "--json",
        "--no-act",
        "--output",
        "DEVICE,OFFSET,TYPE,UUID,LABEL,LENGTH,USAGE",
      ]);
    expect(parseNodeInventory(raw)).toEqual(parseNodeInventory(recorded));
  });

  it("with probeConcurrency 1, one wipefs call lists every device, and the result is the same", async () => {
    const { deps, calls, recorded } = recordedMachine();
    const raw = await discoverNode(deps, {
      node: recorded.name,
      labels: recorded.labels,
      probeConcurrency: 1,
    });
    expect(calls.filter((a) => a[0] === "wipefs").map(wipefsDevices)).toEqual([recorded.probed]);
    expect(parseNodeInventory(raw)).toEqual(parseNodeInventory(recorded));
  });

  it.each([1, 2, 3, 4, 8])(
    "never runs more than %i probe commands at a time, and uses them all",
    async (limit) => {
      const { deps, recorded } = recordedMachine();
      const { slow, seen } = slowProbes(deps.run);
      const raw = await discoverNode(
        { ...deps, run: slow },
        { node: recorded.name, labels: recorded.labels, probeConcurrency: limit },
      );
      expect(seen.max).toBe(limit);
      expect(parseNodeInventory(raw)).toEqual(parseNodeInventory(recorded));
    },
  );

  it("refuses a probe concurrency that is not a whole number >= 1, before running anything", async () => {
    const { deps, calls } = recordedMachine();
    for (const probeConcurrency of [0, -1, 1.5, Number.NaN])
      await expect(discoverNode(deps, { node: "n", probeConcurrency })).rejects.toThrow(
        "probeConcurrency must be a whole number >= 1",
      );
    expect(calls).toEqual([]);
  });

  it("when a group's wipefs call fails, probes each of its devices alone: the failing one is recorded, the others are probed", async () => {
    const { deps, recorded } = recordedMachine();
    const busy = recorded.probed![4]!; // in the second group, with its neighbours
    const calls: string[][] = []; // failed calls too
    const failing = failingOn(busy, deps.run);
    const run: DiscoveryDeps["run"] = (argv) => (calls.push([...argv]), failing(argv));
    const raw = await discoverNode({ ...deps, run }, { node: recorded.name, labels: recorded.labels });
    const group = recorded.probed!.slice(3, 6);
    const wipefs = calls.filter((a) => a[0] === "wipefs").map(wipefsDevices);
    expect(wipefs).toContainEqual(group);
    for (const d of group) expect(wipefs).toContainEqual([d]);

    expect(raw.probeErrors).toEqual({
      [busy]: `wipefs --json --no-act --output DEVICE,OFFSET,TYPE,UUID,LABEL,LENGTH,USAGE ${busy}: exit status 1: wipefs: error: ${busy}: probing initialization failed`,
    });
    expect(raw.probed).toEqual(recorded.probed!.filter((d) => d !== busy));
    expect(calls.filter((a) => a[0] === "blkid").map((a) => a.at(-1))).not.toContain(busy);
    const expected = parseNodeInventory(recorded).devices;
    for (const d of parseNodeInventory(raw).devices) {
      if (d.kname === busy) expect(d).toMatchObject({ probed: false, signatures: [] });
      else expect(d).toEqual(expected.find((e) => e.kname === d.kname));
    }
  });

  it("when a group's wipefs call prints an entry naming none of its devices, probes each device alone", async () => {
    const { deps, calls, recorded } = recordedMachine();
    const run: DiscoveryDeps["run"] = async (argv) => {
      if (argv[0] === "wipefs" && wipefsDevices(argv).length > 1) {
        const { stdout } = await deps.run(argv);
        const { signatures } = JSON.parse(stdout) as { signatures: { device: string }[] };
        return { stdout: JSON.stringify({ signatures: signatures.map((s) => ({ ...s, device: "sdz" })) }) };
      }
      return deps.run(argv);
    };
    const raw = await discoverNode({ ...deps, run }, { node: recorded.name, labels: recorded.labels });
    const withEntries = new Set(recorded.signatures!.map((e) => `/dev/${(e as { device: string }).device}`));
    const groups = contiguousGroups(recorded.probed!, DEFAULT_PROBE_CONCURRENCY);
    const alone = calls
      .filter((a) => a[0] === "wipefs" && wipefsDevices(a).length === 1)
      .flatMap(wipefsDevices);
    expect(alone.sort()).toEqual(
      groups
        .filter((g) => g.some((d) => withEntries.has(d)))
        .flat()
        .sort(),
    );
    expect(parseNodeInventory(raw)).toEqual(parseNodeInventory(recorded));
  });

  it("gives exactly the raw inventory of probing every device alone, one by one, whatever the concurrency and whichever probes fail", async () => {
    const { deps, recorded } = recordedMachine();
    const targets = recorded.probed!;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 16 }),
        fc.subarray([...targets]),
        fc.subarray([...targets]),
        async (probeConcurrency, wipefsFails, blkidFails) => {
          let run = deps.run;
          for (const d of wipefsFails) run = failingOn(d, run);
          const failing = run;
          run = async (argv) => {
            if (argv[0] === "blkid" && blkidFails.includes(argv.at(-1)!))
              throw Object.assign(new Error("exit status 4: usage error"), { exitCode: 4 });
            return failing(argv);
          };
          const reference = await discoverNode(
            { ...deps, run: oneByOne(run) },
            { node: "n", probeConcurrency: 1 },
          );
          const raw = await discoverNode({ ...deps, run }, { node: "n", probeConcurrency });
          expect(JSON.stringify(raw)).toBe(JSON.stringify(reference));
        },
      ),
      { numRuns: 60 },
    );
  });

  it("probes devices that are not directly under /dev alone (wipefs names them by their last component)", async () => {
    const blockdevices = ["/dev/cciss/c0d0", "/dev/cciss/c0d1", "/dev/c0d1"].map((kname) => ({
      name: kname,
      kname,
      path: kname,
      type: "disk",
      size: 1 << 30,
    }));
    const calls: string[][] = [];
    const deps: DiscoveryDeps = {
      async run(argv) {
        calls.push([...argv]);
        if (argv[0] === "lsblk") return { stdout: JSON.stringify({ blockdevices }) };
        if (argv[0] === "lvm") return { stdout: JSON.stringify({ report: [] }) };
        if (argv[0] === "wipefs") return { stdout: "" };
        throw Object.assign(new Error("nothing found"), { exitCode: 2 });
      },
      readFile: async () => undefined,
      readBytes: async () => undefined,
      readdir: async () => undefined,
      readlink: async () => undefined,
    };
    const raw = await discoverNode(deps, { node: "n", probeConcurrency: 1 });
    expect(calls.filter((a) => a[0] === "wipefs").map(wipefsDevices)).toEqual([
      ["/dev/c0d1"],
      ["/dev/cciss/c0d0"],
      ["/dev/cciss/c0d1"],
    ]);
    expect(raw.probed).toEqual(["/dev/c0d1", "/dev/cciss/c0d0", "/dev/cciss/c0d1"]);
  });

  it("a failing lvm report fails the discovery only once no probe command is running any more", async () => {
    const { deps } = recordedMachine();
    const { slow, seen } = slowProbes(deps.run);
    const run: DiscoveryDeps["run"] = async (argv) => {
      if (argv[0] === "lvm") throw Object.assign(new Error("exit status 5: locking failed"), { exitCode: 5 });
      return slow(argv);
    };
    await expect(discoverNode({ ...deps, run }, { node: "n" })).rejects.toThrow("locking failed");
    expect(seen.max).toBeGreaterThan(0);
    expect(seen.running).toBe(0);
  });
});

describe("attribute (entries of a multi-device wipefs call by device)", () => {
  const group = ["/dev/loop3", "/dev/loop10"];
  it("puts each entry on the device it names, as a kernel name or a path, keeping their order", () => {
    const a = { device: "loop10", offset: "0x0", type: "PMBR" };
    const b = { device: "/dev/loop10", offset: "0x200", type: "gpt" };
    const c = { device: "loop3", offset: "0x218", type: "LVM2_member" };
    expect(attribute([a, c, b], group)).toEqual(
      new Map([
        ["/dev/loop3", [c]],
        ["/dev/loop10", [a, b]],
      ]),
    );
    expect(attribute([], group)).toEqual(new Map(group.map((d) => [d, []])));
  });

  it.each([
    ["a device outside the group", { device: "sdb", type: "ext4" }],
    ["a prefix of a device's name", { device: "loop1", type: "ext4" }],
    ["no device", { type: "ext4" }],
    ["an empty device", { device: "", type: "ext4" }],
    ["a device that is not text", { device: 3, type: "ext4" }],
    ["not an object", null],
  ])("gives up (undefined) on an entry naming %s", (_, entry) => {
    expect(attribute([{ device: "loop3", type: "xfs" }, entry], group)).toBeUndefined();
  });
});

describe("limiter", () => {
  it("runs every task, never more than the limit at once, starting them in the order given", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 20 }),
        async (max, delays) => {
          const limit = limiter(max);
          let running = 0;
          let peak = 0;
          const started: number[] = [];
          const results = await Promise.all(
            delays.map((ms, i) =>
              limit(async () => {
                started.push(i);
                peak = Math.max(peak, ++running);
                await new Promise((resolve) => setTimeout(resolve, ms));
                running--;
                return i;
              }),
            ),
          );
          expect(results).toEqual(delays.map((_, i) => i));
          expect(started).toEqual(delays.map((_, i) => i));
          expect(peak).toBe(Math.min(max, delays.length));
        },
      ),
      { numRuns: 40 },
    );
  });

  it("passes a task's failure on and frees its place", async () => {
    const limit = limiter(1);
    await expect(limit(async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    await expect(limit(async () => "next")).resolves.toBe("next");
  });
});

describe("contiguousGroups", () => {
  it.each([
    [[], 4, []],
    [["a"], 4, [["a"]]],
    [
      ["a", "b", "c", "d", "e"],
      2,
      [
        ["a", "b", "c"],
        ["d", "e"],
      ],
    ],
    [["a", "b", "c", "d", "e", "f"], 4, [["a", "b"], ["c", "d"], ["e"], ["f"]]],
  ])("%j in %i → %j", (items, count, groups) => {
    expect(contiguousGroups(items, count)).toEqual(groups);
  });

  it("keeps every item in order, in min(count, items) groups whose sizes differ by at most one", () => {
    fc.assert(
      fc.property(fc.array(fc.nat()), fc.integer({ min: 1, max: 20 }), (items, count) => {
        const groups = contiguousGroups(items, count);
        expect(groups.flat()).toEqual(items);
        expect(groups).toHaveLength(Math.min(count, items.length));
        const sizes = groups.map((g) => g.length);
        if (sizes.length) expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
      }),
    );
  });
});

describe("discoverNode without an allow-list: lvm's report beside lsblk", () => {
  /** The recording machine with lsblk and lvm taking their time, and a log of when each started and ended. */
  function timedMachine(lsblkMs: number, lvmMs: number, over: { lsblk?: Error; lvm?: Error } = {}) {
    const { deps } = recordedMachine();
    const events: string[] = [];
    const run: DiscoveryDeps["run"] = async (argv) => {
      const tool = argv[0]!;
      if (tool !== "lsblk" && tool !== "lvm") return deps.run(argv);
      events.push(`${tool} start`);
      await new Promise((resolve) => setTimeout(resolve, tool === "lsblk" ? lsblkMs : lvmMs));
      events.push(`${tool} end`);
      const failure = over[tool];
      if (failure) throw failure;
      return deps.run(argv);
    };
    return { deps: { ...deps, run }, events };
  }

  it("starts lvm's report before lsblk has answered, with the same result", async () => {
    const { deps, events } = timedMachine(20, 5);
    const { recorded } = recordedMachine();
    const raw = await discoverNode(deps, { node: recorded.name, labels: recorded.labels });
    expect(events).toEqual(["lvm start", "lsblk start", "lvm end", "lsblk end"]);
    expect(parseNodeInventory(raw)).toEqual(parseNodeInventory(recorded));
  });

  it("with an allow-list, asks lvm only after lsblk (its devices come from lsblk's output)", async () => {
    const { deps, events } = timedMachine(5, 5);
    await discoverNode(deps, { node: "n", devices: ["/dev/loop3"] });
    expect(events).toEqual(["lsblk start", "lsblk end", "lvm start", "lvm end"]);
  });

  it("when lsblk fails, fails naming lsblk once lvm's report has finished", async () => {
    const { deps, events } = timedMachine(2, 20, {
      lsblk: new Error("lsblk: exit status 32: failed to access sysfs"),
    });
    await expect(discoverNode(deps, { node: "n" })).rejects.toThrow("failed to access sysfs");
    expect(events).toEqual(["lvm start", "lsblk start", "lsblk end", "lvm end"]);
  });

  it("when lvm fails while lsblk still runs, fails naming lvm once lsblk has finished", async () => {
    const { deps, events } = timedMachine(20, 1, {
      lvm: Object.assign(new Error("exit status 5: locking failed"), { exitCode: 5 }),
    });
    await expect(discoverNode(deps, { node: "n" })).rejects.toThrow("locking failed");
    expect(events).toEqual(["lvm start", "lsblk start", "lvm end", "lsblk end"]);
  });
});
