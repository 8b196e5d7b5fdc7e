import { loadRawFixture } from "../../test/fixtures/inventory/load";
import { discoverNode, type DiscoveryDeps } from "./discover";
import { parseNodeInventory } from "./parse";

/**
 * A fake machine that answers like the one host-loop-mixed was recorded on: lsblk --paths, wipefs and
 * blkid per device, lvm fullreport, sysfs files, plus host mounts that are none of the inventory's business.
 */
function recordedMachine(over: Partial<DiscoveryDeps> = {}) {
  const paths = loadRawFixture("host-loop-mixed-paths");
  const full = loadRawFixture("host-loop-mixed");
  const calls: string[][] = [];
  const hostMounts = "22 27 0:21 / /proc rw,relatime - proc proc rw\n25 1 254:0 / / rw - ext4 /dev/vda rw\n";
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
          const signatures = (paths.signatures as { device: string }[]).filter(
            (s) => `/dev/${s.device}` === device,
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

  it("probes whole devices and partitions, each once", async () => {
    const { deps, calls, recorded } = recordedMachine();
    await discoverNode(deps, { node: "n" });
    expect(calls.filter((a) => a[0] === "wipefs").map((a) => a.at(-1))).toEqual(recorded.probed);
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

  it("records a failed probe instead of failing, and reports that device as not probed", async () => {
    const { deps, recorded } = recordedMachine();
    const busy = recorded.probed![2]!;
    const run: DiscoveryDeps["run"] = async (argv) => {
      if (argv[0] === "wipefs" && argv.at(-1) === busy)
        throw Object.assign(new Error("exit status 1: Device or resource busy"), { exitCode: 1 });
      if (argv[0] === "blkid" && argv.at(-1) === recorded.probed![0])
        throw Object.assign(new Error("exit status 4: usage error"), { exitCode: 4 });
      return deps.run(argv);
    };
    const raw = await discoverNode({ ...deps, run }, { node: "n" });
    expect(raw.probeErrors).toEqual({
      [busy]: `wipefs --json --no-act --output DEVICE,OFFSET,TYPE,UUID,LABEL,LENGTH,USAGE ${busy}: exit status 1: Device or resource busy`,
      [recorded.probed![0]!]: `blkid -p -o export ${recorded.probed![0]}: exit status 4: usage error`,
    });
    const inv = parseNodeInventory(raw);
    expect(inv.devices.filter((d) => !d.probed).map((d) => d.kname)).toEqual([recorded.probed![0], busy]);
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
