/**
 * Conformance of the node agent on a real kernel: the agent runs INSIDE a qemu guest, as on a
 * storage node (token file, 0.0.0.0 listener reached through a forwarded port, state directory and
 * lvmd.yaml on the node's own disk, --devices limited to the test disks), and the test drives it
 * exactly as the provider does (the provider's own client: POST /v1/plan, then POST /v1/apply with
 * the plan's hash). Every outcome is checked with lvm's own reports run in the guest by the test
 * (pvs/vgs/lvs --reportformat json --units b), never through the agent.
 *
 *   npm run test:vm
 *
 * One guest for the whole suite; the steps depend on each other and run in order (a step after a
 * failed one fails too, naming it). The lifecycle cases (create, extend, shrink, converged) come from
 * the table in test/conformance/cases.ts, which the host tier (test/agent/conformance.test.ts) runs as well; the steps
 * only a real kernel can do (thin volumes and snapshots, pvmove under a live writer, a reboot with the
 * disks reordered) are here. Per-step times are printed at the end.
 */
import * as path from "node:path";
import { agentClient, type NodePlanResponse } from "../../src/agent-client/agent-client";
import { thinMetadataExtents } from "../../src/planner/thin";
import type { LVMNodeSpec } from "../../src/api";
import { request } from "../agent/harness";
import {
  LIFECYCLE,
  OVERPROVISION,
  POOL,
  POOL_PERCENT,
  THIN_CLASS,
  expectEqual,
  runLifecycleCase,
  runTeardownCases,
  specFor,
  verifyGroups,
  type AgentTier,
  type CaseOutcome,
  type DiskLabel,
  type LvmRow,
} from "../conformance/cases";
import { startGuest, type DiskSpec, type Guest } from "./guest";
import { formatBoots, Timings } from "../timings";
import { startGuestAgent, type GuestAgent } from "./guest-agent";

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const NODE = "cf-node-1";
const AGENT_PORT = 8443;
const DATA_VG = "cf-data";
const FAST_VG = "cf-fast";
const REPAIR_VG = "cf-repair";
const FAST_WWN = "0x5000c500cf0f0001";
const DISKS: Record<DiskLabel, DiskSpec> = {
  d0: { sizeBytes: GiB, serial: "SN-CF-D0" },
  d1: { sizeBytes: GiB, serial: "SN-CF-D1" },
  d2: { sizeBytes: GiB, serial: "SN-CF-D2" },
  f: { sizeBytes: GiB, serial: "SN-CF-F", wwn: FAST_WWN, vendor: "PLVM", model: "PL FAST DISK" },
};
const LABELS = Object.keys(DISKS) as DiskLabel[];
const STATE_DIR = "/var/lib/pulumi-lvm/agent";
const LVMD = "/etc/topolvm/lvmd.yaml";
const COMMAND_LOG = "/var/log/pulumi-lvm/commands.jsonl";
const TOKEN_FILE = "/etc/pulumi-lvm/agent-tokens";
const MNT = "/var/lib/pl-conformance";
const WRITER = path.join(__dirname, "writer.mjs");
const GUEST_DISKS = path.join(__dirname, "guest-disks.mjs");
const LVM_ENV = { LC_ALL: "C", LVM_SUPPRESS_FD_WARNINGS: "1" };

/* ------------------------------------------------------------------------------ timings ---- */

const timings = new Timings();
const timed = <T>(name: string, fn: () => Promise<T>) => timings.timed(name, fn);
function recordCase(name: string, o: CaseOutcome) {
  timings.add(`${name}: plan`, o.ms.plan);
  if (o.applied) timings.add(`${name}: apply (${o.applied.steps.length} steps)`, o.ms.apply);
  timings.add(`${name}: verify (lvm reports, lvmd.yaml)`, o.ms.verify);
}

/* ------------------------------------------------------------------------------- state ---- */

let guest: Guest | undefined;
let agent: GuestAgent | undefined;
/** label → this boot's device path, from sysfs (guest-disks.mjs), not from the agent */
let paths: Partial<Record<DiskLabel, string>> = {};
/** every path a test disk had in any boot, and the system disk's */
const testPaths = new Set<string>();
let systemDisk = "";
const client = agentClient();
let failed: string | undefined;

const g = (): Guest => {
  if (!guest) throw new Error("the guest did not start (see the beforeAll error)");
  return guest;
};
const a = (): GuestAgent => {
  if (!agent) throw new Error("the agent is not running in the guest (see the earlier error)");
  return agent;
};
const run = (argv: string[], timeoutMs = 120_000) => g().run(argv, { env: LVM_ENV, timeoutMs });

/** Runs a step unless an earlier one failed (then it fails naming that one: never a silent skip). */
async function step(name: string, fn: () => Promise<void>): Promise<void> {
  if (failed) throw new Error(`not run: the earlier step "${failed}" failed, and this one depends on it`);
  try {
    await fn();
  } catch (e) {
    failed = name;
    if (agent)
      (e as Error).message +=
        `\n----- agent log (${agent.logFile}), last lines -----\n${await agent.logTail(30).catch(() => "?")}`;
    throw e;
  }
}

async function report(cmd: "pvs" | "vgs" | "lvs", fields: string, ...flags: string[]): Promise<LvmRow[]> {
  const out = await run([
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
  return (JSON.parse(out) as { report: Array<Record<string, LvmRow[]>> }).report[0]?.[key] ?? [];
}

/** `lvs -a` of a group: a lookup by name ("[pool0_tdata]" for hidden ones) that fails naming what is there. */
async function lvs(vg: string): Promise<(name: string) => LvmRow> {
  const rows = await report(
    "lvs",
    "lv_name,lv_attr,lv_size,pool_lv,origin,data_percent,seg_pe_ranges",
    "-a",
    vg,
  );
  return (name) => {
    const row = rows.find((lv) => lv.lv_name === name);
    if (!row) throw new Error(`no LV ${vg}/${name} in lvs -a: ${rows.map((r) => r.lv_name).join(", ")}`);
    return row;
  };
}

async function vgInfo(vg: string) {
  const [row] = await report(
    "vgs",
    "vg_name,vg_size,vg_extent_size,vg_extent_count,vg_free_count,pv_count",
    vg,
  );
  if (!row) throw new Error(`no volume group ${vg}`);
  return {
    extentSize: Number(row.vg_extent_size),
    extents: Number(row.vg_extent_count),
    free: Number(row.vg_free_count),
    size: Number(row.vg_size),
    pvCount: Number(row.pv_count),
  };
}

async function poolExtents(): Promise<{ extents: number; dataPercent: number; bytes: number }> {
  const lv = (await lvs(DATA_VG))(POOL);
  const { extentSize } = await vgInfo(DATA_VG);
  return {
    extents: Number(lv.lv_size) / extentSize,
    dataPercent: Number(lv.data_percent),
    bytes: Number(lv.lv_size),
  };
}

const sha256 = async (file: string) => (await run(["sha256sum", file])).split(" ")[0]!;

/** Maps the test disks' serials (and the WWN) to this boot's kernel names, from sysfs. */
async function mapDisks(): Promise<void> {
  const seen = JSON.parse(await run(["node", GUEST_DISKS])) as Array<{
    kname: string;
    serial: string | null;
    wwid: string | null;
    sizeBytes: number;
  }>;
  paths = {};
  for (const label of LABELS) {
    const d = seen.find((s) => s.serial === DISKS[label].serial);
    if (!d)
      throw new Error(
        `disk ${label} (serial ${DISKS[label].serial}) is not in the guest: ${JSON.stringify(seen)}`,
      );
    expectEqual(d.sizeBytes, DISKS[label].sizeBytes, `size of ${d.kname} (${label})`);
    if (DISKS[label].wwn)
      expectEqual(d.wwid, `naa.${DISKS[label].wwn!.slice(2)}`, `wwid of ${d.kname} (${label})`);
    paths[label] = d.kname;
    testPaths.add(d.kname);
  }
  systemDisk = seen.find((s) => s.serial === "pl-system")?.kname ?? "";
  if (!systemDisk) throw new Error(`no system disk in ${JSON.stringify(seen)}`);
}

const tier: AgentTier = {
  name: "guest",
  thin: true,
  dataVg: DATA_VG,
  fastVg: FAST_VG,
  select: (disks) =>
    disks.includes("f")
      ? { key: "wwn", operator: "In", values: [FAST_WWN] }
      : { key: "serial", operator: "In", values: disks.map((d) => DISKS[d].serial) },
  path(disk) {
    const p = paths[disk];
    if (!p) throw new Error(`no device path for disk ${disk} in this boot`);
    return p;
  },
  report,
  async readLvmd() {
    const r = await g().exec(["cat", LVMD]);
    return r.code === 0 ? r.stdout : undefined;
  },
  get endpoint() {
    return a().endpoint;
  },
};

async function startAgent(): Promise<void> {
  agent = await timed("agent start in the guest (node + tsx under TCG) → /readyz", () =>
    startGuestAgent(g(), {
      node: NODE,
      port: AGENT_PORT,
      devices: LABELS.map((l) => tier.path(l)),
      stateDir: STATE_DIR,
      lvmdConfig: LVMD,
      commandLog: COMMAND_LOG,
      tokenFile: TOKEN_FILE,
    }),
  );
}

async function planOf(data: readonly DiskLabel[]): Promise<NodePlanResponse> {
  return client.plan(a().endpoint, specFor(tier, data));
}

/** The data group's claims as "id kname", from a plan. */
function claimsOf(plan: NodePlanResponse, vg: string): Array<{ id: string; kname: string; member: boolean }> {
  const group = (
    plan.volumeGroups as Array<{
      name: string;
      claimed: Array<{ id: string; kname: string; member: boolean }>;
    }>
  ).find((v) => v.name === vg);
  if (!group) throw new Error(`the plan has no volume group ${vg}`);
  return group.claimed
    .map(({ id, kname, member }) => ({ id, kname, member }))
    .sort((x, y) => x.id.localeCompare(y.id));
}

/* ------------------------------------------------------------------------------- suite ---- */

jest.setTimeout(600_000);

beforeAll(async () => {
  guest = await timed("boot: qemu start → command service (4 test disks)", () =>
    startGuest({
      disks: LABELS.map((l) => DISKS[l]),
      forwardPorts: [AGENT_PORT],
      hostname: NODE,
    }),
  );
  await timed("map serials/WWN → kernel names (sysfs)", mapDisks);
  await startAgent();
}, 600_000);

afterAll(async () => {
  try {
    await agent?.stop().catch(() => undefined);
  } finally {
    await timed("power off + cleanup", async () => guest?.stop());
    console.log(
      timings.table(`conformance suite (agent in a qemu guest), boots: ${formatBoots(guest?.bootTimesMs)}`, [
        ["this jest process so far (jest's closing Time: is the whole tier)", process.uptime() * 1000],
      ]),
    );
  }
}, 180_000);

describe("node agent conformance on a real kernel (agent inside the guest)", () => {
  test("the agent in the guest answers through the forwarded port, authenticates, and sees exactly the test disks", async () => {
    await step("agent reachable", async () => {
      const anonymous = await request(a().url, "GET", "/v1/inventory", { timeoutMs: 60_000 });
      expectEqual(anonymous.status, 401, "GET /v1/inventory without a token");
      const inv = await timed("GET /v1/inventory", () =>
        request(a().url, "GET", "/v1/inventory", { token: a().token, timeoutMs: 120_000 }),
      );
      expectEqual(inv.status, 200, `GET /v1/inventory: ${inv.text.slice(0, 500)}`);
      const devices = inv.json.devices as Array<{ kname: string; serial?: string; wwn?: string }>;
      expectEqual(
        devices.map((d) => d.kname).sort(),
        LABELS.map((l) => tier.path(l)).sort(),
        "the agent's devices",
      );
      for (const l of LABELS) {
        const d = devices.find((x) => x.kname === tier.path(l))!;
        // the SCSI disk's serial comes from its VPD page 0x80 (no udev in the guest)
        expectEqual(d.serial, DISKS[l].serial, `the agent's serial of ${d.kname}`);
        if (DISKS[l].wwn) expectEqual(d.wwn, FAST_WWN, `the agent's wwn of ${d.kname}`);
      }
    });
  }, 300_000);

  test(`${LIFECYCLE[0]!.name}; thin pool of ${POOL_PERCENT}% of the group, as the planner's policy says`, async () => {
    await step("create", async () => {
      const o = await runLifecycleCase(tier, LIFECYCLE[0]!);
      recordCase("create", o);
      // lvm computes the extents (the group is new): lvcreate --extents 60%VG rounds down
      const create = o.plan.actions.find((x) => x.op === "lvcreate-thinpool")!;
      expect(create.argv).toEqual(
        expect.arrayContaining([
          "--type",
          "thin-pool",
          "--name",
          POOL,
          "--extents",
          `${POOL_PERCENT}%VG`,
          "--zero",
          "y",
          DATA_VG,
        ]),
      );
      const vg = await vgInfo(DATA_VG);
      const pool = await poolExtents();
      expectEqual(
        pool.extents,
        Math.floor((vg.extents * POOL_PERCENT) / 100),
        `pool extents vs ${POOL_PERCENT}% of ${vg.extents}`,
      );
      const lv = await lvs(DATA_VG);
      expect(lv(POOL).lv_attr).toMatch(/^twi-a-tz/);
      const meta = Number(lv(`[${POOL}_tmeta]`).lv_size) / vg.extentSize;
      const spare = Number(lv("[lvol0_pmspare]").lv_size) / vg.extentSize;
      expectEqual(
        vg.free,
        vg.extents - pool.extents - meta - spare,
        "free extents = group - pool data - metadata - spare",
      );
      expectEqual(pool.dataPercent, 0, "a new pool's data%");
      const status = await request(a().url, "GET", "/v1/status", { token: a().token, timeoutMs: 120_000 });
      expectEqual(status.status, 200, `GET /v1/status: ${status.text.slice(0, 3000)}`);
      expect(
        status.json.status.volumeGroups.map((v: { name: string; state: string }) => `${v.name} ${v.state}`),
      ).toEqual([`${DATA_VG} Healthy`, `${FAST_VG} Healthy`]);
      expect(
        status.json.status.deviceClasses.map((d: { name: string; state: string }) => `${d.name} ${d.state}`),
      ).toEqual([`${THIN_CLASS} Healthy`, "fast Healthy"]);
    });
  });

  test(LIFECYCLE[1]!.name, async () => {
    await step("converged after create", async () =>
      recordCase("converged", await runLifecycleCase(tier, LIFECYCLE[1]!)),
    );
  });

  test("thin volumes larger than the group, overcommitted ones, with data; deleted: the pool gets the space back", async () => {
    await step("thin volumes", async () => {
      const vg = await vgInfo(DATA_VG);
      const pool = await poolExtents();
      const before = pool.dataPercent;
      // as TopoLVM's lvmd creates thin volumes: lvcreate -T <vg>/<pool> -n <name> -V <size>
      const volumes = [
        { name: "tv-big", size: 4 * GiB }, // larger than the whole group
        { name: "tv-oc1", size: 2 * GiB },
        { name: "tv-oc2", size: 2 * GiB },
        { name: "tv-oc3", size: 2 * GiB },
      ];
      const virtual = volumes.reduce((s, v) => s + v.size, 0);
      expect(volumes[0]!.size).toBeGreaterThan(vg.size);
      expect(virtual).toBeGreaterThan(3 * pool.bytes); // overcommitted
      expect(virtual).toBeLessThanOrEqual(OVERPROVISION * pool.bytes); // within the class's ratio (TopoLVM checks it)
      await timed("lvcreate 4 thin volumes (10 GiB virtual on a 1.2 GiB pool)", async () => {
        for (const v of volumes)
          await run(["lvcreate", "-T", `${DATA_VG}/${POOL}`, "-n", v.name, "-V", `${v.size / MiB}m`]);
      });
      const written = 16 * MiB;
      await timed("write 16 MiB to each (tv-big past the group's size) + read back + compare", async () => {
        await run(["dd", "if=/dev/urandom", "of=/tmp/block", "bs=1M", "count=16", "status=none"]);
        const sum = await sha256("/tmp/block");
        for (const v of volumes) {
          // at the end of each volume: for tv-big that is 3.98 GiB in, past the end of the group
          const at = String(v.size / MiB - 16);
          const lvPath = `/dev/${DATA_VG}/${v.name}`;
          await run([
            "dd",
            "if=/tmp/block",
            `of=${lvPath}`,
            "bs=1M",
            `seek=${at}`,
            "oflag=direct",
            "conv=fsync",
            "status=none",
          ]);
          await run([
            "dd",
            `if=${lvPath}`,
            "of=/tmp/back",
            "bs=1M",
            "count=16",
            `skip=${at}`,
            "iflag=direct",
            "status=none",
          ]);
          expectEqual(await sha256("/tmp/back"), sum, `the 16 MiB read back from ${v.name}`);
        }
      });
      const used = await poolExtents();
      const usedBytes = ((used.dataPercent - before) / 100) * used.bytes;
      expect(usedBytes).toBeGreaterThanOrEqual(volumes.length * written * 0.99);
      expect(usedBytes).toBeLessThan(volumes.length * written * 1.1);
      const lv = await lvs(DATA_VG);
      for (const v of volumes) {
        expect(lv(v.name)).toMatchObject({ pool_lv: POOL, lv_size: String(v.size) });
        expect(lv(v.name).lv_attr).toMatch(/^Vwi-a-tz/);
      }
      await timed("lvremove the 4 thin volumes", async () => {
        for (const v of volumes) await run(["lvremove", "-f", `${DATA_VG}/${v.name}`]);
      });
      const after = await poolExtents();
      expect(after.dataPercent).toBeLessThanOrEqual(before + 0.01);
      expectEqual(after.extents, pool.extents, "pool extents (deleting volumes does not shrink the pool)");
      // the agent's view agrees: still converged
      const plan = await planOf(["d0", "d1"]);
      expectEqual(plan.actions, [], "plan after thin volumes came and went");
    });
  }, 300_000);

  const sums: Record<string, string> = {};
  test("a thin volume with xfs, mounted, and a thin snapshot of it that keeps the data of when it was taken", async () => {
    await step("thin snapshot", async () => {
      await timed("thin volume (1 GiB) + mkfs.xfs + mount + write 32 MiB", async () => {
        await run(["lvcreate", "-T", `${DATA_VG}/${POOL}`, "-n", "vol-fs", "-V", "1g"]);
        await run(["mkfs.xfs", "-q", `/dev/${DATA_VG}/vol-fs`]);
        await run(["mkdir", "-p", `${MNT}/fs`, `${MNT}/snap`]);
        await run(["mount", `/dev/${DATA_VG}/vol-fs`, `${MNT}/fs`]);
        await run([
          "dd",
          "if=/dev/urandom",
          `of=${MNT}/fs/data`,
          "bs=1M",
          "count=32",
          "conv=fsync",
          "status=none",
        ]);
        sums.data = await sha256(`${MNT}/fs/data`);
      });
      await timed("thin snapshot + change the origin + mount the snapshot", async () => {
        await run(["lvcreate", "-s", "-n", "vol-fs-snap", `${DATA_VG}/vol-fs`]);
        await run([
          "dd",
          "if=/dev/urandom",
          `of=${MNT}/fs/data`,
          "bs=1M",
          "count=32",
          "conv=fsync",
          "status=none",
        ]);
        await run(["lvchange", "-ay", "-K", `${DATA_VG}/vol-fs-snap`]); // thin snapshots skip activation
        await run(["mount", "-o", "ro,nouuid", `/dev/${DATA_VG}/vol-fs-snap`, `${MNT}/snap`]);
      });
      const taken = sums.data!;
      sums.data = await sha256(`${MNT}/fs/data`);
      expectEqual(await sha256(`${MNT}/snap/data`), taken, "the snapshot's data");
      expect(sums.data).not.toBe(taken);
      const lv = await lvs(DATA_VG);
      expect(lv("vol-fs-snap")).toMatchObject({ origin: "vol-fs", pool_lv: POOL });
      expect(lv("vol-fs-snap").lv_attr).toMatch(/^Vwi-aotz-k$/);
      await run(["umount", `${MNT}/snap`]);
      await run(["lvchange", "-an", `${DATA_VG}/vol-fs-snap`]);
      // a linear volume in the fast group, as TopoLVM makes them for a Thick class
      await run(["lvcreate", "-n", "fast-vol", "-L", "64m", FAST_VG]);

      // the agent reports the pool's usage (status and metrics) as lvm does
      const pool = (await lvs(DATA_VG))(POOL);
      expect(Number(pool.data_percent)).toBeGreaterThan(0);
      const status = await timed("GET /v1/status + GET /metrics", async () => {
        const r = await request(a().url, "GET", "/v1/status", { token: a().token, timeoutMs: 120_000 });
        expectEqual(r.status, 200, `GET /v1/status: ${r.text.slice(0, 3000)}`);
        return r.json;
      });
      const reported = status.status.volumeGroups.find((v: { name: string }) => v.name === DATA_VG);
      expect(reported.volumes).toEqual([
        expect.objectContaining({ name: POOL, attributes: pool.lv_attr, dataPercent: pool.data_percent }),
      ]);
      const metrics = await request(a().url, "GET", "/metrics", { timeoutMs: 120_000 });
      const gauge = new RegExp(
        `^pulumi_lvm_agent_thin_pool_data_usage_ratio\\{vg="${DATA_VG}",pool="${POOL}"\\} (\\S+)$`,
        "m",
      ).exec(metrics.text);
      if (!gauge) throw new Error(`no thin pool data gauge in /metrics:\n${metrics.text.slice(0, 3000)}`);
      // the gauge is a ratio 0-1 (Prometheus naming); lvs reports percent
      expect(Number(gauge[1])).toBeCloseTo(Number(pool.data_percent) / 100, 4);
    });
  }, 300_000);

  let beforeExtend = 0;
  test(`${LIFECYCLE[2]!.name} → vgextend + thin pool grown back to ${POOL_PERCENT}%`, async () => {
    await step("extend", async () => {
      beforeExtend = (await poolExtents()).extents;
      const o = await runLifecycleCase(tier, LIFECYCLE[2]!);
      recordCase("extend", o);
      const grow = o.plan.actions.find((x) => x.op === "lvextend-thinpool")!;
      expect(grow.argv).toEqual(["lvextend", "--extents", `${POOL_PERCENT}%VG`, `${DATA_VG}/${POOL}`]);
      const vg = await vgInfo(DATA_VG);
      expectEqual(vg.pvCount, 3, "physical volumes");
      const pool = await poolExtents();
      // lvextend --extents 60%VG rounds up (lvm2), and the next plan's exact target (rounded down) is not more
      expectEqual(
        pool.extents,
        Math.ceil((vg.extents * POOL_PERCENT) / 100),
        `pool extents vs ${POOL_PERCENT}% of ${vg.extents}`,
      );
      expect(pool.extents).toBeGreaterThan(beforeExtend);
      // the pool's metadata is at least what lvm gives a pool of its new data size (read with the
      // test's own lvs, not through the agent), and the next plan has no metadata step
      const [meta] = await tier.report(
        "lvs",
        "lv_name,lv_size,lv_metadata_size,chunk_size",
        `${DATA_VG}/${POOL}`,
      );
      const need = thinMetadataExtents(pool.extents, vg.extentSize, Number(meta!.chunk_size)) * vg.extentSize;
      expect(Number(meta!.lv_metadata_size)).toBeGreaterThanOrEqual(need);
      const again = await planOf(["d0", "d1", "d2"]);
      expectEqual(again.actions, [], "plan after the pool and its metadata grew");
      expectEqual(await sha256(`${MNT}/fs/data`), sums.data, "the mounted volume's data after the pool grew");
    });
  });

  test(LIFECYCLE[3]!.name, async () => {
    await step("converged after extend", async () =>
      recordCase("converged (3 disks)", await runLifecycleCase(tier, LIFECYCLE[3]!)),
    );
  });

  test("a pool setting lvm cannot change (chunkSize) is blocked with the reason; a larger metadataSize is a step lvm runs", async () => {
    await step("pool settings", async () => {
      const base = specFor(tier, ["d0", "d1", "d2"]);
      const [meta] = await tier.report("lvs", "lv_metadata_size,chunk_size", `${DATA_VG}/${POOL}`);
      const metaNow = Number(meta!.lv_metadata_size);
      const chunk = Number(meta!.chunk_size);
      const vg = await vgInfo(DATA_VG);
      const bigger = metaNow + 2 * vg.extentSize;
      const changed = {
        ...base,
        deviceClasses: base.deviceClasses!.map((dc) =>
          dc.name === THIN_CLASS
            ? {
                ...dc,
                thin: {
                  ...dc.thin!,
                  chunkSize: `${(chunk * 2) / 1024}Ki`,
                  metadataSize: `${bigger / 1024 ** 2}Mi`,
                },
              }
            : dc,
        ),
      } as typeof base;
      const plan = await client.plan(a().endpoint, changed);
      expect(plan.blocked.map((b) => b.reason)).toEqual([
        expect.stringMatching(
          new RegExp(
            `^thin pool ${DATA_VG}/${POOL} .* chunks and chunkSize asks for .*: lvm cannot change the chunk size`,
          ),
        ),
      ]);
      expectEqual(
        plan.actions.map((x) => x.argv.join(" ")),
        [`lvextend --poolmetadatasize ${bigger}b ${DATA_VG}/${POOL}`],
        "the plan's steps",
      );
      // the real lvm grows a pool's metadata in place
      await client.apply(a().endpoint, changed, plan.hash);
      const [after] = await tier.report("lvs", "lv_metadata_size,chunk_size", `${DATA_VG}/${POOL}`);
      expectEqual(Number(after!.lv_metadata_size), bigger, "the pool's metadata after the apply");
      expectEqual(Number(after!.chunk_size), chunk, "the pool's chunk size (unchanged)");
      // back to the spec of the lifecycle: converged (larger metadata is kept, never shrunk)
      expectEqual((await planOf(["d0", "d1", "d2"])).actions, [], "plan with the lifecycle's spec again");
    });
  });

  let claimsBeforeReboot: ReturnType<typeof claimsOf> = [];
  test(`${LIFECYCLE[4]!.name} while a filesystem on a thin volume is mounted and written → pvmove live, data intact`, async () => {
    await step("shrink under a writer", async () => {
      const d0 = tier.path("d0");
      const allocatedOnD0 = (await report("pvs", "pv_name,pv_used", d0))[0]!;
      expect(Number(allocatedOnD0.pv_used)).toBeGreaterThan(0); // there are extents to move
      const poolBefore = await poolExtents();
      const dir = `${MNT}/fs/w`;
      const stopFile = "/run/pl-conformance-writer.stop";
      await run(["mkdir", "-p", dir]);
      const writer = await g().spawn(["node", WRITER, dir, "64", stopFile]);
      const manifestLines = async () =>
        Number((await run(["wc", "-l", `${dir}/manifest`])).trim().split(" ")[0]);
      await timed("background writer started (5 files written)", async () => {
        for (let i = 0; ; i++) {
          const r = await g().exec(["wc", "-l", `${dir}/manifest`]);
          if (r.code === 0 && Number(r.stdout.trim().split(" ")[0]) >= 5) break;
          if (i > 240) throw new Error(`the writer did not write 5 files in 60 s: ${r.stderr}`);
          await new Promise((res) => setTimeout(res, 250));
        }
      });
      const linesBefore = await manifestLines();
      let o: CaseOutcome;
      try {
        o = await runLifecycleCase(tier, LIFECYCLE[4]!);
      } finally {
        await run(["touch", stopFile]);
      }
      recordCase("shrink (pvmove live)", o);
      const linesAfter = await manifestLines();
      const pvmove = o.plan.actions.find((x) => x.op === "pvmove")!;
      expectEqual(
        pvmove.argv,
        ["pvmove", "--interval", "1", d0, tier.path("d1"), tier.path("d2")],
        "pvmove argv: only onto the remaining members",
      );
      const pvmoveStep = o.applied!.steps.find((s) => s.op === "pvmove")!;
      timings.add("  of which pvmove (~1 GiB, mounted, written)", pvmoveStep.durationMs);

      const exit = await timed("writer stopped", async () => {
        for (let i = 0; i < 240; i++) {
          const p = (await g().processes()).find((x) => x.pid === writer.pid)!;
          if (p.exitCode !== null || p.signal !== null) return p;
          await new Promise((res) => setTimeout(res, 250));
        }
        throw new Error("the writer did not stop within 60 s");
      });
      const result = JSON.parse(await run(["cat", `${dir}/result.json`])) as {
        files: number;
        errors: string[];
      };
      expectEqual(result.errors, [], "the writer's errors");
      expectEqual(exit.exitCode, 0, "the writer's exit code");
      expect(linesAfter - linesBefore).toBeGreaterThan(0); // it wrote while the extents moved
      timings.add(
        `  writer: ${result.files} files of 1 MiB, ${linesAfter - linesBefore} while the apply ran`,
        0,
      );

      await timed(
        "drop caches + verify every file the writer wrote (sha256sum -c) + the data file",
        async () => {
          await run(["sync"]);
          await run(["sysctl", "-q", "-w", "vm.drop_caches=3"]);
          await verifyWriterFiles(dir);
          expectEqual(await sha256(`${MNT}/fs/data`), sums.data, "the data file after pvmove");
        },
      );
      expect((await report("pvs", "pv_name")).map((p) => p.pv_name)).not.toContain(d0); // pvremove ran
      const sig = await g().exec(["wipefs", "--no-act", "--json", d0]);
      expect(sig.stdout).not.toContain("LVM2_member");
      // pools never shrink: the pool keeps its size, now more than 60% of the smaller group
      const vg = await vgInfo(DATA_VG);
      expectEqual((await poolExtents()).extents, poolBefore.extents, "pool extents after the disk left");
      expectEqual(vg.pvCount, 2, "physical volumes after the disk left");
      claimsBeforeReboot = claimsOf(o.plan, DATA_VG);
    });
  }, 600_000);

  test(LIFECYCLE[5]!.name, async () => {
    await step("converged after shrink", async () =>
      recordCase("converged (d1, d2)", await runLifecycleCase(tier, LIFECYCLE[5]!)),
    );
  });

  test("after a reboot with the disks in another order: the agent claims the same disks, nothing new, no actions", async () => {
    await step("reboot", async () => {
      const exitCode = await timed("agent stop (SIGTERM)", () => a().stop());
      expectEqual(exitCode, 0, "the agent's exit code on SIGTERM");
      agent = undefined;
      const before = { ...paths };
      await timed("reboot with the disks in reverse order", () =>
        g().reboot({ diskOrder: [...LABELS].reverse().map((l) => DISKS[l].serial) }),
      );
      await mapDisks();
      expect(paths.d0).not.toBe(before.d0);
      expect(paths.d2).not.toBe(before.d2);
      await startAgent();
      // a fresh boot without udev: nothing is active yet, as on a node whose agent starts first
      const plan = await timed("plan after the reboot (volume groups inactive)", () => planOf(["d1", "d2"]));
      expectEqual(plan.actions, [], "actions after the reboot");
      expectEqual(plan.blocked, [], "blocked after the reboot");
      const claims = claimsOf(plan, DATA_VG);
      expectEqual(
        claims.map((c) => c.id),
        claimsBeforeReboot.map((c) => c.id),
        "the data group's claims (by identity) after the reboot",
      );
      expectEqual(
        claims.map((c) => [c.kname, c.member]).sort(),
        [
          [tier.path("d1"), true],
          [tier.path("d2"), true],
        ].sort(),
        "the data group's claims (this boot's names), all members",
      );
      await verifyGroups(tier, ["d1", "d2"]);
      await timed("vgchange -ay + mount + verify data after the reboot", async () => {
        await run(["vgchange", "-ay", DATA_VG, FAST_VG]);
        await run(["mkdir", "-p", `${MNT}/fs`]);
        await run(["mount", `/dev/${DATA_VG}/vol-fs`, `${MNT}/fs`]);
        expectEqual(await sha256(`${MNT}/fs/data`), sums.data, "the data file after the reboot");
        await verifyWriterFiles(`${MNT}/fs/w`);
      });
      const active = await planOf(["d1", "d2"]);
      expectEqual(active.actions, [], "actions after activating the groups");
    });
  }, 600_000);

  test("teardown: refused (409, the volumes listed) while user volumes exist; with force: groups and PV labels gone", async () => {
    await step("teardown", async () => {
      const t = await runTeardownCases(
        tier,
        ["d1", "d2"],
        [
          { vg: DATA_VG, name: "vol-fs" },
          { vg: DATA_VG, name: "vol-fs-snap" },
          { vg: FAST_VG, name: "fast-vol" },
        ],
        // a volume in use cannot be removed, forced or not: the operator unmounts it first
        () => run(["umount", `${MNT}/fs`]).then(() => undefined),
      );
      timings.add("teardown refused (409)", t.refusedMs);
      timings.add("teardown with force", t.forcedMs);
      for (const l of LABELS) {
        const sig = await g().exec(["wipefs", "--no-act", "--json", tier.path(l)]);
        expect(sig.stdout).not.toContain("LVM2_member");
      }
      const status = await request(a().url, "GET", "/v1/status", { token: a().token, timeoutMs: 120_000 });
      expectEqual(status.status, 200, `GET /v1/status: ${status.text.slice(0, 3000)}`);
      expect(status.json.lastOperation).toMatchObject({ kind: "teardown", result: "succeeded" });
    });
  }, 300_000);

  test("a disk dies under a group with a thin pool and two volumes: Degraded naming it; the repair names the lost volume; after it the group is whole and the survivor intact", async () => {
    await step("failed disk", async () => {
      const d0 = tier.path("d0");
      const f = tier.path("f");
      const spec = (missingDevicePolicy?: string) =>
        ({
          volumeGroups: [
            {
              name: REPAIR_VG,
              deviceSelector: {
                deviceSelectorTerms: [
                  {
                    matchExpressions: [
                      { key: "serial", operator: "In", values: [DISKS.d0.serial, DISKS.f.serial] },
                    ],
                  },
                ],
              },
              minDeviceSize: "64Mi",
              ...(missingDevicePolicy ? { missingDevicePolicy } : {}),
            },
          ],
          deviceClasses: [
            {
              name: "repair-thin",
              strategy: "Thin",
              volumeGroup: REPAIR_VG,
              default: true,
              thin: { poolName: POOL, sizePercent: 20, overprovisionRatio: 2 },
            },
          ],
        }) as LVMNodeSpec;
      // The group first, then its pool with f not allocatable, so that the pool and its metadata live
      // on d0 (lvm would start on f, the first PV); then one volume on each disk, lvm told where.
      const groupOnly = { ...spec(), deviceClasses: [] } as LVMNodeSpec;
      const built = await client.plan(a().endpoint, groupOnly);
      await timed("failed disk: build the group (apply)", () =>
        client.apply(a().endpoint, groupOnly, built.hash),
      );
      await run(["pvchange", "--allocatable", "n", f]);
      const pool = await client.plan(a().endpoint, spec());
      await timed("failed disk: its thin pool (apply)", () => client.apply(a().endpoint, spec(), pool.hash));
      await run(["pvchange", "--allocatable", "y", f]);
      await run(["lvcreate", "--yes", "-L", "64m", "-n", "keep", REPAIR_VG, d0]);
      await run(["lvcreate", "--yes", "-L", "64m", "-n", "lost", REPAIR_VG, f]);
      const onF = (await report("lvs", "lv_name,devices", "-a", REPAIR_VG)).filter((r) =>
        String(r.devices).includes(f),
      );
      expectEqual(
        onF.map((r) => r.lv_name),
        ["lost"],
        "the logical volumes on the disk that will die",
      );
      await run(["dd", "if=/dev/urandom", `of=/dev/${REPAIR_VG}/keep`, "bs=1M", "count=64", "oflag=direct"]);
      const keepSum = await sha256(`/dev/${REPAIR_VG}/keep`);

      // The disk dies: the SCSI device is deleted from the kernel (its /dev node goes with it).
      await run(["sh", "-c", `echo 1 > /sys/block/${tier.path("f").replace(/^\/dev\//, "")}/device/delete`]);
      const status = await request(a().url, "GET", "/v1/status", { token: a().token, timeoutMs: 120_000 });
      const group = (
        status.json.status.volumeGroups as Array<{ name: string; state: string; message?: string }>
      ).find((v) => v.name === REPAIR_VG);
      expect(group).toMatchObject({ state: "Degraded", message: expect.stringMatching(/is missing/) });

      const waiting = await client.plan(a().endpoint, spec());
      expectEqual(waiting.actions, [], "steps while the policy is Wait");
      expect(waiting.blocked).toEqual([
        expect.objectContaining({ reason: expect.stringMatching(/holds data of logical volume lost;/) }),
      ]);
      const repair = await client.plan(a().endpoint, spec("RemoveWithLostVolumes"));
      const step0 = (repair.actions as Array<{ op: string; argv: string[]; lostVolumes?: string[] }>)[0]!;
      expect(step0).toMatchObject({
        op: "vgreduce-removemissing",
        argv: ["vgreduce", "--removemissing", "--force", REPAIR_VG],
        lostVolumes: [`${REPAIR_VG}/lost`],
      });
      await timed("failed disk: repair (vgreduce --removemissing --force)", () =>
        client.apply(a().endpoint, spec("RemoveWithLostVolumes"), repair.hash),
      );
      const [vg] = await report("vgs", "vg_name,pv_count,vg_missing_pv_count", REPAIR_VG);
      expect(vg).toMatchObject({ pv_count: "1", vg_missing_pv_count: "0" });
      const left = (await report("lvs", "lv_name", REPAIR_VG)).map((r) => r.lv_name).sort();
      expectEqual(left, ["keep", POOL], "the volumes after the repair");
      expectEqual(await sha256(`/dev/${REPAIR_VG}/keep`), keepSum, "the surviving volume's checksum");
      const after = await client.plan(a().endpoint, spec("RemoveWithLostVolumes"));
      expectEqual(after.blocked, [], "blocked after the repair");
      expect((after.actions as Array<{ op: string }>).map((x) => x.op)).not.toContain(
        "vgreduce-removemissing",
      );
      const healthy = await request(a().url, "GET", "/v1/status", { token: a().token, timeoutMs: 120_000 });
      expect(
        (healthy.json.status.volumeGroups as Array<{ name: string; state: string }>).find(
          (v) => v.name === REPAIR_VG,
        ),
      ).toMatchObject({ state: "Healthy" });

      await run(["lvremove", "--yes", `${REPAIR_VG}/keep`, `${REPAIR_VG}/${POOL}`]);
      await run(["vgremove", "--yes", REPAIR_VG]);
    });
  }, 600_000);

  test("every write the agent ran named only the test disks (never the system disk), as argv", async () => {
    await step("command log", async () => {
      const entries = (await run(["cat", COMMAND_LOG]))
        .split("\n")
        .filter(Boolean)
        .map(
          (l) =>
            JSON.parse(l) as { event: string; tool: string; requested: string[]; exitCode: number | null },
        )
        .filter((e) => e.event !== "start");
      const writes = entries.filter(
        (e) =>
          !["lsblk", "blkid", "pvs", "vgs", "lvs", "lvm"].includes(e.tool) &&
          !(e.tool === "wipefs" && e.requested.includes("--no-act")),
      );
      expect(writes.map((w) => w.tool)).toEqual(
        expect.arrayContaining([
          "pvcreate",
          "vgcreate",
          "lvcreate",
          "vgextend",
          "lvextend",
          "pvmove",
          "vgreduce",
          "pvremove",
          "vgremove",
        ]),
      );
      for (const w of writes)
        for (const word of w.requested.flatMap((x) => x.split(",")).filter((x) => x.startsWith("/dev/"))) {
          expect(testPaths.has(word) ? word : `${word} (not a test disk)`).toBe(word);
          expect(word).not.toBe(systemDisk);
        }
    });
  });
});

/** Every file the writer last wrote (the manifest's last line per path) still has that content. */
async function verifyWriterFiles(dir: string): Promise<void> {
  const manifest = (await run(["cat", `${dir}/manifest`])).split("\n").filter(Boolean);
  const latest = new Map<string, string>();
  for (const line of manifest) {
    const [sum, file] = line.split("  ");
    latest.set(file!, sum!);
  }
  expect(latest.size).toBeGreaterThan(0);
  const check = [...latest].map(([file, sum]) => `${sum}  ${file}\n`).join("");
  const r = await g().exec(["sha256sum", "--check", "--quiet", "--strict"], {
    stdin: check,
    timeoutMs: 120_000,
  });
  expectEqual(
    r.code,
    0,
    `sha256sum --check of ${latest.size} files the writer wrote: ${r.stdout}${r.stderr}`,
  );
}
