/**
 * Smoke test of the real-kernel tier: a qemu guest with a Debian kernel, the host's lvm2 inside it,
 * three disks (two virtio-blk with serials, one scsi-hd with a WWN). Proves that what the host kernel
 * cannot do works here: thin pools, thin volumes larger than the VG, thin snapshots, xfs/ext4 on thin
 * volumes, pvmove while mounted, and a reboot with the disks in another order.
 *
 *   npm run test:vm
 *   PULUMI_LVM_RECORD_FIXTURES=1 npm run test:vm -- test/vm/smoke   # also rewrites test/fixtures/inventory/guest-*.json
 *
 * The inventories are recorded with the product itself: `pulumi-lvm inventory` (src/cli/main.ts, run
 * with node + tsx in the guest, as the agent is), i.e. src/inventory/discover.ts on a real kernel.
 *
 * The steps depend on each other and run in order; each step's time is printed at the end.
 */
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { parseNodeInventory } from "../../src/inventory/parse";
import { parseSysfs } from "../../src/inventory/sysfs";
import type { RawNodeInventory } from "../../src/inventory/types";
import { Guest, REPO_ROOT, startGuest } from "./guest";
import { formatBoots, Timings } from "../timings";

const GiB = 1024 ** 3;
const VG = "vgpl";
const MNT = "/var/lib/pl-smoke";
const DISK_A = { sizeBytes: GiB, serial: "SN-AAA111" };
const DISK_B = {
  sizeBytes: GiB,
  serial: "SN-BBB222",
  wwn: "0x5000c500a1b2c3d4",
  vendor: "PLVM",
  model: "PL TEST DISK",
};
const DISK_C = { sizeBytes: GiB, serial: "SN-CCC333" };
const FIXTURES = path.join(REPO_ROOT, "test", "fixtures", "inventory");
const RECORD = process.env.PULUMI_LVM_RECORD_FIXTURES === "1";
const LVM_ENV = { LC_ALL: "C", LVM_SUPPRESS_FD_WARNINGS: "1" };
const NODE = "pl-guest";
/** The product's command line, at its path in the guest; run with node + tsx from the project tree. */
const CLI = path.join(REPO_ROOT, "src", "cli", "main.ts");

const timings = new Timings();
const timed = <T>(name: string, fn: () => Promise<T>) => timings.timed(name, fn);

/** A device in lsblk's JSON (the columns used here). */
interface LsblkDevice {
  name: string;
  kname: string;
  type: string;
  size: number;
  mountpoints: Array<string | null>;
  children?: LsblkDevice[];
}
/** A row of an lvm JSON report: every value is a string. */
type LvmRow = Record<string, string>;
interface LvmReport {
  report: Array<{ pv?: LvmRow[]; vg?: LvmRow[]; lv?: LvmRow[] }>;
}

/** The node `pulumi-lvm inventory` prints (RawNodeInventory, src/inventory/types.ts), typed as used here. */
interface RawInventory {
  name: string;
  lsblk: { blockdevices: LsblkDevice[] };
  lvm: unknown;
  signatures: Array<{ device: string; type: string; offset: string }>;
  probed: string[];
  blkid: Record<string, string>;
  sysfs: Record<string, Record<string, string>>;
  links: Record<string, string>;
  mounts: string;
  swaps: string;
}

/** Every device in an lsblk tree, flattened. */
function flatten(devices: LsblkDevice[] | undefined): LsblkDevice[] {
  return (devices ?? []).flatMap((d) => [d, ...flatten(d.children)]);
}

describe("real kernel (qemu guest): thin pools, snapshots, pvmove, filesystems", () => {
  let guest: Guest | undefined;
  /** serial → "/dev/<kname>" in the current boot */
  let dev: Record<string, string> = {};
  const sums: Record<string, string> = {};

  const g = (): Guest => {
    if (!guest) throw new Error("the guest did not start (see the beforeAll error)");
    return guest;
  };
  const run = (argv: string[], timeoutMs = 120_000) => g().run(argv, { env: LVM_ENV, timeoutMs });
  /** The rows of `pvs|vgs|lvs --reportformat json` in bytes. */
  const report = async (
    cmd: "pvs" | "vgs" | "lvs",
    fields: string,
    ...flags: string[]
  ): Promise<LvmRow[]> => {
    const json = await run([
      cmd,
      ...flags,
      "-o",
      fields,
      "--reportformat",
      "json",
      "--units",
      "b",
      "--nosuffix",
    ]);
    const key = cmd.slice(0, 2) as "pv" | "vg" | "lv";
    return (JSON.parse(json) as LvmReport).report[0]?.[key] ?? [];
  };
  /** `lvs -a`: a lookup by LV name ("[pool0_tdata]" for hidden ones) that fails naming a missing LV. */
  const lvs = async (): Promise<(name: string) => LvmRow> => {
    const rows = await report("lvs", "lv_name,lv_attr,lv_size,pool_lv,origin,data_percent", "-a");
    return (name) => {
      const row = rows.find((lv) => lv.lv_name === name);
      if (!row) throw new Error(`no LV ${name} in lvs: ${rows.map((r) => r.lv_name).join(", ")}`);
      return row;
    };
  };
  const sha256 = async (file: string) => (await run(["sha256sum", file])).split(" ")[0]!;
  /**
   * `pulumi-lvm inventory` in the guest (reads only; every block device, the system disk included), its
   * one node; also checked to parse with the product's parser, as `pulumi-lvm plan --inventory` would.
   */
  const inventory = async (): Promise<RawInventory> => {
    const argv = ["node", "--import", "tsx", CLI, "inventory", "--node", NODE];
    const out = await g().run([...argv, "--label", `kubernetes.io/hostname=${NODE}`], {
      cwd: REPO_ROOT,
      timeoutMs: 180_000,
    });
    const { nodes } = JSON.parse(out) as { nodes: RawInventory[] };
    expect(nodes.map((n) => n.name)).toEqual([NODE]);
    const raw = nodes[0]!;
    expect(parseNodeInventory(raw satisfies RawNodeInventory).node).toBe(NODE);
    return raw;
  };
  const mapSerials = (inv: RawInventory) => {
    const map: Record<string, string> = {};
    for (const [kname, attrs] of Object.entries(inv.sysfs)) {
      const serial = parseSysfs(attrs).serial;
      if (serial) map[serial] = `/dev/${kname}`;
    }
    return map;
  };
  /** Writes guest-<state>-paths.json: the node's RawNodeInventory as `pulumi-lvm inventory` printed it. */
  const record = (state: string, inv: RawInventory) => {
    if (!RECORD) return;
    fs.writeFileSync(path.join(FIXTURES, `guest-${state}-paths.json`), JSON.stringify(inv, null, 2) + "\n");
  };

  beforeAll(async () => {
    guest = await timed("boot (qemu start → command service ready)", () =>
      startGuest({ disks: [DISK_A, DISK_B, DISK_C], hostname: NODE, forwardPorts: [8080] }),
    );
  }, 300_000);

  afterAll(async () => {
    await timed("power off + cleanup", async () => guest?.stop());
    console.log(
      timings.table(
        `real-kernel smoke suite, boots (qemu start → ready): ${formatBoots(guest?.bootTimesMs)}`,
      ),
    );
  }, 120_000);

  test("the guest runs the pinned Debian kernel with device-mapper", async () => {
    await timed("kernel + device-mapper targets", async () => {
      expect(await run(["uname", "-r"])).toMatch(/^6\.1\.0-\d+-amd64/);
      const targets = await run(["dmsetup", "targets"]);
      for (const t of ["thin-pool", "thin", "snapshot", "mirror", "linear"])
        expect(targets).toMatch(new RegExp(`^${t}\\s`, "m"));
    });
  }, 60_000);

  test("the command service runs argv (never a shell), enforces timeouts, reports missing programs", async () => {
    await timed("command service checks", async () => {
      expect(await g().exec(["echo", "$(id -u)", ";", "|"])).toMatchObject({
        code: 0,
        stdout: "$(id -u) ; |\n",
      });
      expect(await g().exec(["sh", "-c", "echo out; echo err >&2; exit 3"])).toMatchObject({
        code: 3,
        stdout: "out\n",
        stderr: "err\n",
      });
      const slow = await g().exec(["sleep", "30"], { timeoutMs: 500 });
      expect(slow).toMatchObject({ code: null, signal: "SIGKILL", timedOut: true });
      expect((await g().exec(["/no/such/program"])).code).toBe(127);
      expect(await g().exec(["cat"], { stdin: "in" })).toMatchObject({ code: 0, stdout: "in" });
    });
  }, 60_000);

  test("HTTP both ways: host → a server in the guest (forwarded port), guest → a server on the host (10.0.2.2)", async () => {
    const body = await timed("HTTP server in the guest, request from the host", async () => {
      const server =
        'require("http").createServer((q, r) => r.end(require("os").hostname() + " " + q.url)).listen(8080)';
      await g().spawn(["node", "-e", server]);
      const url = `http://127.0.0.1:${g().hostPort(8080)}/ping`;
      const deadline = Date.now() + 30_000;
      for (;;) {
        try {
          // qemu accepts on the host side before the guest listens; such a connection can wait for
          // headers forever, so every attempt gets its own deadline.
          const res = await fetch(url, { signal: AbortSignal.timeout(3_000) });
          return await res.text();
        } catch (e) {
          if (Date.now() > deadline) throw e;
          await new Promise((r) => setTimeout(r, 250));
        }
      }
    });
    expect(body).toBe("pl-guest /ping");

    // the agent in the guest reaches services on the host's loopback (e.g. a kube-apiserver) via 10.0.2.2
    const hostServer = http.createServer((q, r) => r.end(`host ${q.url}`));
    await new Promise<void>((resolve) => hostServer.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = hostServer.address() as AddressInfo;
      const fetchFromHost = `fetch("http://10.0.2.2:${port}/pong").then((r) => r.text()).then(console.log)`;
      const out = await timed("request from the guest to the host", () => run(["node", "-e", fetchFromHost]));
      expect(out).toBe("host /pong\n");
    } finally {
      hostServer.close();
    }
  }, 60_000);

  test("blank disks: serials and the WWN come from sysfs; no signatures; recorded inventory", async () => {
    const inv = await timed("inventory: blank disks", inventory);
    dev = mapSerials(inv);
    expect(Object.keys(dev).sort()).toEqual(["SN-AAA111", "SN-BBB222", "SN-CCC333", "pl-system"]);
    expect(dev[DISK_A.serial]).toMatch(/^\/dev\/vd[a-z]$/);
    expect(dev[DISK_C.serial]).toMatch(/^\/dev\/vd[a-z]$/);
    expect(dev[DISK_B.serial]).toMatch(/^\/dev\/sd[a-z]$/);
    const b = inv.sysfs[path.basename(dev[DISK_B.serial]!)]!;
    expect(b["device/wwid"]).toBe("naa.5000c500a1b2c3d4\n");
    expect(b["device/model"]?.trim()).toBe("PL TEST DISK");
    expect(b["device/vendor"]?.trim()).toBe("PLVM");
    for (const s of [DISK_A, DISK_B, DISK_C]) {
      const kname = path.basename(dev[s.serial]!);
      expect(inv.sysfs[kname]!.size).toBe(`${s.sizeBytes / 512}\n`);
      expect(inv.probed).toContain(`/dev/${kname}`);
      expect(inv.blkid[`/dev/${kname}`]).toBe("");
      expect(inv.signatures.filter((sig) => sig.device === kname)).toEqual([]);
      const lsblkDev = flatten(inv.lsblk.blockdevices).find((d) => d.kname === dev[s.serial]);
      expect(lsblkDev).toMatchObject({ type: "disk", size: s.sizeBytes });
      expect(lsblkDev?.children).toBeUndefined();
    }
    // the system disk is in use, as a node's root disk is
    const sys = flatten(inv.lsblk.blockdevices).find((d) => d.kname === dev["pl-system"]);
    expect(sys?.mountpoints).toContain("/var/lib/pl-vm/system-disk");
    record("blank", inv);
  }, 120_000);

  test("PVs, a VG, a thin pool on 90%FREE, thin volumes larger than the VG", async () => {
    const [a, b, c] = [dev[DISK_A.serial]!, dev[DISK_B.serial]!, dev[DISK_C.serial]!];
    await timed("pvcreate ×3 + vgcreate (2 PVs)", async () => {
      await run(["pvcreate", a, b, c]);
      await run(["vgcreate", VG, a, b]);
    });
    await timed("lvcreate thin pool 90%FREE", () =>
      run(["lvcreate", "--type", "thin-pool", "-l", "90%FREE", "-n", "pool0", VG]),
    );
    await timed("lvcreate 2 thin LVs (4 GiB + 3 GiB)", async () => {
      await run(["lvcreate", "-V", "4g", "-T", `${VG}/pool0`, "-n", "thin-xfs"]);
      await run(["lvcreate", "-V", "3g", "-T", `${VG}/pool0`, "-n", "thin-ext4"]);
    });
    const [vg = {}] = await report("vgs", "vg_name,vg_size,pv_count");
    expect(vg).toMatchObject({ vg_name: VG, pv_count: "2" });
    const lv = await lvs();
    expect(lv("pool0").lv_attr).toMatch(/^twi-a/);
    expect(Number(lv("pool0").lv_size)).toBeGreaterThan(0.85 * Number(vg.vg_size));
    expect(lv("thin-xfs")).toMatchObject({ pool_lv: "pool0", lv_size: String(4 * GiB) });
    expect(lv("thin-xfs").lv_attr).toMatch(/^Vwi-a/);
    expect(Number(lv("thin-xfs").lv_size)).toBeGreaterThan(Number(vg.vg_size));
  }, 180_000);

  test("xfs and ext4 on thin volumes, mounted, with data", async () => {
    await timed("mkfs.xfs + mkfs.ext4 + mount", async () => {
      await run(["mkfs.xfs", "-q", `/dev/${VG}/thin-xfs`]);
      await run(["mkfs.ext4", "-q", "-F", `/dev/${VG}/thin-ext4`]);
      await run(["mkdir", "-p", `${MNT}/xfs`, `${MNT}/ext4`, `${MNT}/snap`]);
      await run(["mount", `/dev/${VG}/thin-xfs`, `${MNT}/xfs`]);
      await run(["mount", `/dev/${VG}/thin-ext4`, `${MNT}/ext4`]);
    });
    await timed("write 2×32 MiB + sha256", async () => {
      for (const fs of ["xfs", "ext4"]) {
        await run([
          "dd",
          "if=/dev/urandom",
          `of=${MNT}/${fs}/data`,
          "bs=1M",
          "count=32",
          "conv=fsync",
          "status=none",
        ]);
        sums[fs] = await sha256(`${MNT}/${fs}/data`);
      }
    });
    expect(await run(["findmnt", "-n", "-o", "FSTYPE", `${MNT}/xfs`])).toBe("xfs\n");
    expect(await run(["findmnt", "-n", "-o", "FSTYPE", `${MNT}/ext4`])).toBe("ext4\n");
    expect(Number((await lvs())("thin-xfs").data_percent)).toBeGreaterThan(0);
  }, 180_000);

  test("a thin snapshot keeps the data of when it was taken", async () => {
    await timed("thin snapshot + change origin + mount snapshot", async () => {
      await run(["lvcreate", "-s", "-n", "snap-xfs", `${VG}/thin-xfs`]);
      await run([
        "dd",
        "if=/dev/urandom",
        `of=${MNT}/xfs/data`,
        "bs=1M",
        "count=32",
        "conv=fsync",
        "status=none",
      ]);
      // thin snapshots are created with the activation-skip flag: -K activates anyway
      await run(["lvchange", "-ay", "-K", `${VG}/snap-xfs`]);
      await run(["mount", "-o", "ro,nouuid", `/dev/${VG}/snap-xfs`, `${MNT}/snap`]);
    });
    const before = sums.xfs!;
    sums.xfs = await sha256(`${MNT}/xfs/data`);
    sums.snap = await sha256(`${MNT}/snap/data`);
    expect(sums.snap).toBe(before);
    expect(sums.xfs).not.toBe(before);
    const lv = await lvs();
    expect(lv("snap-xfs")).toMatchObject({ origin: "thin-xfs", pool_lv: "pool0" });
    expect(lv("snap-xfs").lv_attr).toMatch(/^Vwi-aotz-k$/);
  }, 180_000);

  test("recorded inventory: VG, thin pool, thin LVs, snapshot, mounted filesystems, an unused PV", async () => {
    const w = await timed("inventory: thin stack", inventory);
    const sigs = (kname: string) => w.signatures.filter((s) => s.device === kname).map((s) => s.type);
    expect(sigs(path.basename(dev[DISK_A.serial]!))).toEqual(["LVM2_member"]);
    expect(sigs(path.basename(dev[DISK_C.serial]!))).toEqual(["LVM2_member"]);
    const lsblkDev = (name: string) => flatten(w.lsblk.blockdevices).find((d) => d.name === name);
    const xfsDm = lsblkDev(`/dev/mapper/${VG}-thin--xfs`)?.kname;
    expect(xfsDm).toMatch(/^\/dev\/dm-\d+$/);
    // discovery probes whole devices and partitions only, never the device-mapper devices on them
    expect([...w.probed].sort()).toEqual(Object.values(dev).sort());
    expect(sigs(path.basename(xfsDm!))).toEqual([]);
    expect(w.blkid[xfsDm!]).toBeUndefined();
    expect(w.sysfs[path.basename(xfsDm!)]!["dm/name"]).toBe(`${VG}-thin--xfs\n`);
    expect(lsblkDev(`/dev/mapper/${VG}-thin--ext4`)).toMatchObject({
      type: "lvm",
      mountpoints: [`${MNT}/ext4`],
    });
    // no udev in the guest: /dev/mapper holds device nodes, not links, and /dev/disk does not exist
    expect(w.links).toEqual({});
    const lvmReport = JSON.stringify(w.lvm);
    for (const name of ["pool0", "thin-xfs", "thin-ext4", "snap-xfs"])
      expect(lvmReport).toContain(`"lv_name":"${name}"`);
    expect(w.mounts).toMatch(new RegExp(` ${MNT}/xfs .* - xfs `));
    expect(w.mounts).toMatch(new RegExp(` ${MNT}/ext4 .* - ext4 `));
    // the planner's view of the same inventory: two PVs in the VG, one in none
    const pvs = parseNodeInventory(w).pvs.map((pv) => [pv.device, pv.vgName]);
    expect(pvs.sort()).toEqual(
      [
        [dev[DISK_A.serial], VG],
        [dev[DISK_B.serial], VG],
        [dev[DISK_C.serial], ""],
      ].sort(),
    );
    record("thin", w);
  }, 120_000);

  test("pvmove moves the thin pool's extents to another PV while mounted; data unchanged", async () => {
    const [a, c] = [dev[DISK_A.serial]!, dev[DISK_C.serial]!];
    await timed("vgextend + pvmove (mounted)", async () => {
      await run(["vgextend", VG, c]);
      await run(["pvmove", "-i", "0", a, c], 300_000);
    });
    const pvs = await report("pvs", "pv_name,vg_name,pv_used");
    const used = Object.fromEntries(pvs.map((p) => [p.pv_name, Number(p.pv_used)]));
    expect(used[a]).toBe(0);
    expect(used[c]).toBeGreaterThan(0);
    await timed("drop caches + verify checksums", async () => {
      await run(["sysctl", "-q", "-w", "vm.drop_caches=3"]);
      expect(await sha256(`${MNT}/xfs/data`)).toBe(sums.xfs);
      expect(await sha256(`${MNT}/ext4/data`)).toBe(sums.ext4);
      expect(await sha256(`${MNT}/snap/data`)).toBe(sums.snap);
    });
  }, 420_000);

  test("lsblk and lvs JSON show the stack", async () => {
    const [a, b, c] = [dev[DISK_A.serial]!, dev[DISK_B.serial]!, dev[DISK_C.serial]!];
    const lsblk: { blockdevices: LsblkDevice[] } = JSON.parse(
      await run(["lsblk", "--json", "--bytes", "--paths", "-o", "NAME,KNAME,TYPE,SIZE,MOUNTPOINTS"]),
    );
    const top: Record<string, LsblkDevice> = Object.fromEntries(lsblk.blockdevices.map((d) => [d.name, d]));
    expect(top[a]?.children).toBeUndefined(); // everything moved off A
    const names = (d: LsblkDevice | undefined) => flatten(d?.children).map((x) => x.name);
    expect(names(top[c])).toEqual(
      expect.arrayContaining([`/dev/mapper/${VG}-thin--xfs`, `/dev/mapper/${VG}-pool0_tdata`]),
    );
    expect(names(top[b])).toEqual(expect.arrayContaining([`/dev/mapper/${VG}-thin--ext4`]));
    const xfs = flatten(top[c]?.children).find((d) => d.name === `/dev/mapper/${VG}-thin--xfs`);
    expect(xfs).toMatchObject({ type: "lvm", size: 4 * GiB, mountpoints: [`${MNT}/xfs`] });
    const lv = await lvs();
    expect(lv("pool0").lv_attr).toBe("twi-aotz--");
    expect(lv("thin-xfs").lv_attr).toBe("Vwi-aotz--");
    expect(lv("thin-ext4").lv_attr).toBe("Vwi-aotz--");
  }, 60_000);

  test("after a reboot with the disks in another order: same PVs by serial, same data", async () => {
    const before = { ...dev };
    await timed("reboot with reversed disk order", () =>
      g().reboot({ diskOrder: [DISK_C.serial, DISK_B.serial, DISK_A.serial] }),
    );
    const inv = await timed("inventory after the reboot", inventory);
    dev = mapSerials(inv);
    expect(dev[DISK_A.serial]).not.toBe(before[DISK_A.serial]);
    expect(dev[DISK_C.serial]).not.toBe(before[DISK_C.serial]);
    const pvs = await report("pvs", "pv_name,vg_name,pv_used");
    const byName = Object.fromEntries(pvs.map((p) => [p.pv_name, p]));
    expect(byName[dev[DISK_A.serial]!]).toMatchObject({ vg_name: VG, pv_used: "0" });
    expect(Number(byName[dev[DISK_C.serial]!].pv_used)).toBeGreaterThan(0);
    await timed("vgchange -ay + mount + verify after reboot", async () => {
      await run(["vgchange", "-ay", VG]); // no udev in the guest: nothing auto-activates
      await run(["mkdir", "-p", `${MNT}/xfs`, `${MNT}/ext4`]);
      await run(["mount", `/dev/${VG}/thin-xfs`, `${MNT}/xfs`]);
      await run(["mount", `/dev/${VG}/thin-ext4`, `${MNT}/ext4`]);
      expect(await sha256(`${MNT}/xfs/data`)).toBe(sums.xfs);
      expect(await sha256(`${MNT}/ext4/data`)).toBe(sums.ext4);
    });
  }, 420_000);
});
