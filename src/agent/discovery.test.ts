import { CommandRefusedError, type Runner } from "./lvm-runner";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { DiscoveryCache } from "../inventory/probe-cache";
import { createDiscovery, hostDiscoveryDeps, readOnlyRefusal, readOnlyRunner } from "./discovery";

describe("readOnlyRunner", () => {
  it.each([
    [["lsblk", "--json", "--bytes", "--output-all", "--paths"]],
    [["blkid", "-p", "-o", "export", "/dev/sdb"]],
    [["wipefs", "--json", "--no-act", "--output", "DEVICE,OFFSET,TYPE", "/dev/sdb"]],
    [["lvm", "fullreport", "--reportformat", "json"]],
  ])("lets discovery's reading command %j through", (argv) => {
    expect(readOnlyRefusal(argv)).toBeUndefined();
  });

  it.each([
    [["wipefs", "--all", "/dev/sdb"]],
    [["wipefs", "--no-act", "--all", "/dev/sdb"]],
    [["wipefs", "--json", "/dev/sdb"]],
    [["blkid", "/dev/sdb"]],
    [["lvm", "pvcreate", "/dev/sdb"]],
    [["pvcreate", "/dev/sdb"]],
    [["vgs"]],
    [[]],
  ])("refuses %j without running it", async (argv) => {
    const ran: string[][] = [];
    const run: Runner = async (a) => {
      ran.push([...a]);
      return { argv: a, stdout: "", stderr: "", durationMs: 0 };
    };
    await expect(readOnlyRunner(run)(argv)).rejects.toBeInstanceOf(CommandRefusedError);
    expect(ran).toEqual([]);
  });
});

describe("hostDiscoveryDeps", () => {
  const run: Runner = async (a) => ({ argv: a, stdout: "", stderr: "", durationMs: 0 });
  const deps = hostDiscoveryDeps(run);
  let dir: string;
  beforeAll(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), "host-deps-"))));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("reads kernel files (sysfs, procfs, /dev) as they are, undefined when missing", async () => {
    expect(await deps.readFile("/proc/self/mountinfo")).toBe(fs.readFileSync("/proc/self/mountinfo", "utf8"));
    expect(await deps.readFile("/proc/self/no-such-file")).toBeUndefined();
    expect(await deps.readFile("/sys/class/block/no-such-device/size")).toBeUndefined();
    expect(await deps.readdir("/dev")).toEqual(fs.readdirSync("/dev"));
    expect(await deps.readdir("/sys/class/block/no-such-device/holders")).toBeUndefined();
    expect(await deps.readlink("/proc/self/cwd")).toBe(process.cwd());
    expect(await deps.readlink("/dev/null")).toBeUndefined(); // a device node, not a link
    expect(await deps.readBytes("/proc/self/no-such-file")).toBeUndefined();
  });

  it("reads other files too, undefined when missing", async () => {
    fs.writeFileSync(path.join(dir, "f"), "text");
    fs.symlinkSync("f", path.join(dir, "l"));
    expect(await deps.readFile(path.join(dir, "f"))).toBe("text");
    expect(Buffer.from((await deps.readBytes(path.join(dir, "f")))!).toString()).toBe("text");
    expect(await deps.readFile(path.join(dir, "missing"))).toBeUndefined();
    expect(await deps.readdir(dir)).toEqual(["f", "l"]);
    expect(await deps.readlink(path.join(dir, "l"))).toBe("f");
    expect(await deps.readlink(path.join(dir, "f"))).toBeUndefined();
  });

  it("stamps files for the discovery cache: here by default, under hostRoot, or not at all without one", async () => {
    fs.writeFileSync(path.join(dir, "img"), "0123");
    const here = await deps.stamp!(path.join(dir, "img"));
    expect(here).toMatchObject({ type: "file", size: "4" });
    expect(here!.mtimeNs).toMatch(/^\d+$/);
    expect(await deps.stamp!("/dev/null")).toMatchObject({ type: "other" }); // a character device
    expect(await deps.stamp!(path.join(dir, "missing"))).toBeUndefined();
    const rooted = hostDiscoveryDeps(run, { hostRoot: dir });
    expect(await rooted.stamp!("/img")).toEqual(here);
    const blind = hostDiscoveryDeps(run, { hostRoot: undefined });
    expect(await blind.stamp!(path.join(dir, "img"))).toBeUndefined();
    expect(await blind.stamp!("/dev/null")).toMatchObject({ type: "other" }); // /dev is this process's own
  });
});

describe("createDiscovery with a cache", () => {
  it("looks in the cache for an inventory, and not at all for a fresh discovery (an apply's)", async () => {
    const run: Runner = async (argv) => {
      const out = (stdout: unknown) => ({ argv, stdout: JSON.stringify(stdout), stderr: "", durationMs: 0 });
      if (argv[0] === "lsblk")
        return out({
          blockdevices: [{ name: "/dev/no-such-h3", kname: "/dev/no-such-h3", type: "disk", size: 1 }],
        });
      if (argv[0] === "wipefs") return out({ signatures: [] });
      if (argv[1] === "config")
        return {
          argv,
          stdout: 'use_devicesfile=0\ndevicesfile="system.devices"\n',
          stderr: "",
          durationMs: 0,
        };
      return out({ report: [] });
    };
    const lookups: string[] = [];
    const cache = new DiscoveryCache({ observe: (kind, result) => lookups.push(`${kind}:${result}`) });
    const discover = createDiscovery({ node: "n", run, cache });
    await discover({ fresh: true });
    expect(lookups).toEqual([]);
    await discover();
    expect(lookups.sort()).toEqual(["signatures:miss", "sysfs:miss"]);
  });
});
