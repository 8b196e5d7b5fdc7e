/**
 * The agent's lifecycle as a table of cases that two tiers run, each on its own disks, each checking
 * the outcome with its own lvm reports (never through the agent):
 *
 * - the real-kernel tier, test/vm/conformance.test.ts: the agent inside a qemu guest, disks selected
 *   by serial and WWN, with a Thin device class (thin pool created, grown, its extents moved);
 * - the host tier, test/agent/conformance.test.ts: the agent on the host, loop devices selected by
 *   path, Thick classes only (the host kernel has no device-mapper, so no thin pool can exist there).
 *
 * A node has three data disks d0..d2 (the "data" volume group takes those its case names) and one
 * disk "f" (the "fast" volume group, a Thick device class). Every case is driven exactly as the
 * provider drives an agent: its own client (src/agent-client/agent-client.ts) POSTs /v1/plan, and,
 * when the plan has steps, /v1/apply with the plan's hash.
 */
import { isDeepStrictEqual } from "node:util";
import YAML from "yaml";
import { agentClient, type AgentEndpoint, type NodePlanResponse } from "../../src/agent-client/agent-client";
import type { LVMNodeSpec } from "../../src/api";
import { ACTION_ORDER } from "../../src/planner";
import { request } from "../agent/harness";
import { topolvmLvmdProblems } from "./topolvm-lvmd";

export type DiskLabel = "d0" | "d1" | "d2" | "f";
export const DATA_DISKS: readonly DiskLabel[] = ["d0", "d1", "d2"];

/** One row of an lvm JSON report: every value is a string (bytes with --units b --nosuffix). */
export type LvmRow = Record<string, string>;

/** How a tier builds its node and looks at it. */
export interface AgentTier {
  /** "guest" or "host", for messages. */
  readonly name: string;
  /** Whether device-mapper works, so the data group has a Thin device class. */
  readonly thin: boolean;
  readonly dataVg: string;
  readonly fastVg: string;
  /** A device selector expression naming these disks (by serial, WWN, path...). */
  select(disks: readonly DiskLabel[]): DeviceExpression;
  /** The disk's device path now (kernel names change across reboots). */
  path(disk: DiskLabel): string;
  /** `pvs|vgs|lvs --reportformat json --units b --nosuffix -o <fields> [flags]`, run by the test. */
  report(cmd: "pvs" | "vgs" | "lvs", fields: string, ...flags: string[]): Promise<LvmRow[]>;
  /** The agent's lvmd.yaml as it is on the node, or undefined when there is none. */
  readLvmd(): Promise<string | undefined>;
  readonly endpoint: AgentEndpoint;
}

export interface DeviceExpression {
  readonly key: string;
  readonly operator: "In";
  readonly values: readonly string[];
}

export const THIN_CLASS = "data-thin";
export const POOL = "pool0";
/** The pool's share of the data group. Less than 100 - 100/3 so that a disk can leave a 3-disk group. */
export const POOL_PERCENT = 60;
export const OVERPROVISION = 10;

/** The LVMNode spec: the data group on `data`, the fast group on f; the data class Thin where the tier can. */
export function specFor(tier: AgentTier, data: readonly DiskLabel[]): LVMNodeSpec {
  const group = (name: string, e: DeviceExpression) => ({
    name,
    deviceSelector: { deviceSelectorTerms: [{ matchExpressions: [{ ...e, values: [...e.values] }] }] },
    minDeviceSize: "64Mi",
  });
  return {
    volumeGroups: [group(tier.dataVg, tier.select(data)), group(tier.fastVg, tier.select(["f"]))],
    deviceClasses: [
      tier.thin
        ? {
            name: THIN_CLASS,
            strategy: "Thin",
            volumeGroup: tier.dataVg,
            default: true,
            thin: { poolName: POOL, sizePercent: POOL_PERCENT, overprovisionRatio: OVERPROVISION },
          }
        : { name: "data-thick", strategy: "Thick", volumeGroup: tier.dataVg, default: true },
      { name: "fast", strategy: "Thick", volumeGroup: tier.fastVg },
    ],
  } as LVMNodeSpec;
}

/**
 * The device classes lvmd.yaml must list for specFor(), written in TopoLVM's format by hand (not by
 * the planner): a Thin class names its pool and ratio; every class sets spare-gb 0, or lvmd keeps
 * 10 GiB of the group unused (for a thin class, lvmd's free-bytes report subtracts it too).
 */
export function expectedLvmdClasses(tier: AgentTier): unknown[] {
  return [
    tier.thin
      ? {
          name: THIN_CLASS,
          "volume-group": tier.dataVg,
          default: true,
          type: "thin",
          "spare-gb": 0,
          "thin-pool": { name: POOL, "overprovision-ratio": OVERPROVISION },
        }
      : { name: "data-thick", "volume-group": tier.dataVg, default: true, type: "thick", "spare-gb": 0 },
    { name: "fast", "volume-group": tier.fastVg, type: "thick", "spare-gb": 0 },
  ];
}

export interface LifecycleCase {
  readonly name: string;
  /** The disks the data group's selector names. */
  readonly data: readonly DiskLabel[];
  /**
   * The plan's steps as "<op> <group>[:<disk>]" (group "data" or "fast"), in any order within one op;
   * `thin`: whether the tier has the thin pool (and so extents to move).
   */
  readonly steps: (thin: boolean) => readonly string[];
  /** The data group's physical volumes afterwards. */
  readonly members: readonly DiskLabel[];
}

export const LIFECYCLE: readonly LifecycleCase[] = [
  {
    name: "create: data group on d0+d1, fast group on f, lvmd.yaml",
    data: ["d0", "d1"],
    steps: (thin) => [
      "pvcreate data:d0",
      "pvcreate data:d1",
      "pvcreate fast:f",
      "vgcreate data",
      "vgcreate fast",
      "pvchange data:d0",
      "pvchange data:d1",
      "pvchange fast:f",
      ...(thin ? ["lvcreate-thinpool data"] : []),
      "write-lvmd-config",
    ],
    members: ["d0", "d1"],
  },
  { name: "converged after create", data: ["d0", "d1"], steps: () => [], members: ["d0", "d1"] },
  {
    name: "extend: d2 added to the selector",
    data: ["d0", "d1", "d2"],
    steps: (thin) => [
      "pvcreate data:d2",
      "vgextend data:d2",
      "pvchange data:d2",
      ...(thin ? ["lvextend-thinpool data"] : []),
    ],
    members: ["d0", "d1", "d2"],
  },
  { name: "converged after extend", data: ["d0", "d1", "d2"], steps: () => [], members: ["d0", "d1", "d2"] },
  {
    name: "shrink: d0 removed from the selector",
    data: ["d1", "d2"],
    steps: (thin) => [...(thin ? ["pvmove data:d0"] : []), "vgreduce data:d0", "pvremove data:d0"],
    members: ["d1", "d2"],
  },
  { name: "converged after shrink", data: ["d1", "d2"], steps: () => [], members: ["d1", "d2"] },
];

/** The order the planner runs kinds of steps in (docs/plan-format.md). */
const OP_ORDER: readonly string[] = ACTION_ORDER;

/** Steps sorted by kind, then by label: the comparison ignores the order within a kind. */
export function normalizeSteps(steps: readonly string[]): string[] {
  const rank = (s: string) => OP_ORDER.indexOf(s.split(" ")[0]!);
  return [...steps].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/** A plan action as "<op> <group>[:<disk>]". Throws for a device that is none of the tier's disks. */
export function stepLabel(tier: AgentTier, a: { op: string; volumeGroup?: string; device?: string }): string {
  if (a.op === "write-lvmd-config") return a.op;
  const group =
    a.volumeGroup === tier.dataVg ? "data" : a.volumeGroup === tier.fastVg ? "fast" : `?${a.volumeGroup}`;
  if (!a.device) return `${a.op} ${group}`;
  const disk = (["d0", "d1", "d2", "f"] as const).find((d) => tier.path(d) === a.device);
  if (!disk)
    throw new Error(`${tier.name}: the plan's ${a.op} names ${a.device}, which is none of the test's disks`);
  return `${a.op} ${group}:${disk}`;
}

export interface CaseOutcome {
  readonly plan: NodePlanResponse;
  /** The apply's answer; undefined when the plan had no steps (the provider then does not apply). */
  readonly applied?: Awaited<ReturnType<ReturnType<typeof agentClient>["apply"]>>;
  /** Per phase, in ms. */
  readonly ms: { plan: number; apply: number; verify: number };
}

const client = agentClient();

/**
 * Runs one case: plan (must have exactly the case's steps and nothing blocked), apply with the
 * plan's hash (every step done), then checks with the tier's own lvm reports: both groups exist with
 * our tag, the data group has exactly the case's members, the fast group has f, and lvmd.yaml lists
 * the device classes in TopoLVM's format and passes TopoLVM's own validation rules.
 */
export async function runLifecycleCase(tier: AgentTier, c: LifecycleCase): Promise<CaseOutcome> {
  const spec = specFor(tier, c.data);
  const t0 = Date.now();
  const plan = await client.plan(tier.endpoint, spec);
  const t1 = Date.now();
  const context = () =>
    `${tier.name}, case "${c.name}": plan ${JSON.stringify(plan, null, 1).slice(0, 6000)}`;
  expectEqual(plan.blocked, [], `${context()}\nblocked`);
  expectEqual(
    normalizeSteps(plan.actions.map((a) => stepLabel(tier, a))),
    normalizeSteps(c.steps(tier.thin)),
    `${context()}\nsteps`,
  );
  const ranks = plan.actions.map((a) => OP_ORDER.indexOf(a.op));
  expectEqual(
    ranks,
    [...ranks].sort((a, b) => a - b),
    `${context()}\nthe order of the kinds of steps`,
  );
  let applied: CaseOutcome["applied"];
  if (plan.actions.length) {
    applied = await client.apply(tier.endpoint, spec, plan.hash);
    expectEqual(
      applied.steps.map((s) => `${s.op} ${s.outcome}`),
      plan.actions.map((a) => `${a.op} done`),
      `${tier.name}, case "${c.name}": apply`,
    );
  }
  const t2 = Date.now();
  await verifyGroups(tier, c.members);
  await verifyLvmd(tier);
  return {
    plan,
    ...(applied ? { applied } : {}),
    ms: { plan: t1 - t0, apply: t2 - t1, verify: Date.now() - t2 },
  };
}

/** Both groups exist, tagged pulumi-lvm, with exactly these members (data) and f (fast): lvm's view. */
export async function verifyGroups(tier: AgentTier, dataMembers: readonly DiskLabel[]): Promise<void> {
  const vgs = await tier.report("vgs", "vg_name,vg_tags,pv_count");
  const pvs = await tier.report("pvs", "pv_name,vg_name,pv_tags");
  const ours = new Set([tier.dataVg, tier.fastVg]);
  expectEqual(
    vgs
      .filter((v) => ours.has(v.vg_name!))
      .map((v) => [v.vg_name, v.vg_tags])
      .sort(),
    [
      [tier.dataVg, "pulumi-lvm"],
      [tier.fastVg, "pulumi-lvm"],
    ].sort(),
    `${tier.name}: vgs`,
  );
  const members = (vg: string) =>
    pvs
      .filter((p) => p.vg_name === vg)
      .map((p) => p.pv_name!)
      .sort();
  expectEqual(
    members(tier.dataVg),
    dataMembers.map((d) => tier.path(d)).sort(),
    `${tier.name}: pvs of ${tier.dataVg}`,
  );
  expectEqual(members(tier.fastVg), [tier.path("f")], `${tier.name}: pvs of ${tier.fastVg}`);
  // every member carries the kernel name it joined under (docs/device-selection.md, section 6)
  for (const p of pvs.filter((p) => ours.has(p.vg_name!)))
    if (!/(^|,)pulumi-lvm\.kname=/.test(p.pv_tags ?? ""))
      throw new Error(
        `${tier.name}: ${p.pv_name} in ${p.vg_name} has no pulumi-lvm.kname tag (tags: ${p.pv_tags})`,
      );
}

/** lvmd.yaml on the node: the expected classes, and nothing TopoLVM's lvmd would refuse. */
export async function verifyLvmd(tier: AgentTier): Promise<Record<string, unknown>> {
  const text = await tier.readLvmd();
  if (text === undefined) throw new Error(`${tier.name}: no lvmd.yaml was written`);
  const doc = YAML.parse(text) as Record<string, unknown>;
  expectEqual(topolvmLvmdProblems(doc), [], `${tier.name}: TopoLVM's lvmd would refuse lvmd.yaml:\n${text}`);
  expectEqual(
    doc["device-classes"],
    expectedLvmdClasses(tier),
    `${tier.name}: lvmd.yaml device-classes:\n${text}`,
  );
  expectEqual(doc["socket-name"], "/run/topolvm/lvmd.sock", `${tier.name}: lvmd.yaml socket-name`);
  return doc;
}

/**
 * Teardown as a user would try it: refused (409 VolumeGroupInUse, listing the volumes, nothing
 * changed) while the groups hold volumes the test created as TopoLVM would; then with force: every
 * group and PV label gone (the tier's own pvs/vgs), lvmd.yaml with no device classes.
 */
export async function runTeardownCases(
  tier: AgentTier,
  data: readonly DiskLabel[],
  userVolumes: ReadonlyArray<{ vg: string; name: string }>,
  beforeForce?: () => Promise<void>,
): Promise<{ refusedMs: number; forcedMs: number }> {
  const spec = specFor(tier, data);
  const t0 = Date.now();
  const refused = await request(tier.endpoint.url, "POST", "/v1/teardown", {
    token: tier.endpoint.token,
    body: { spec },
  });
  const refusedMs = Date.now() - t0;
  if (refused.status !== 409 || refused.json?.error?.code !== "VolumeGroupInUse")
    throw new Error(
      `${tier.name}: teardown with volumes present: expected 409 VolumeGroupInUse, got ${refused.status}: ${refused.text}`,
    );
  expectEqual(
    (refused.json.error.volumes as Array<{ volumeGroup: string; name: string }>)
      .map((v) => `${v.volumeGroup}/${v.name}`)
      .sort(),
    userVolumes.map((v) => `${v.vg}/${v.name}`).sort(),
    `${tier.name}: the volumes a refused teardown lists`,
  );
  await verifyGroups(tier, data); // nothing changed
  await verifyLvmd(tier);

  await beforeForce?.();
  const t1 = Date.now();
  const forced = await request(tier.endpoint.url, "POST", "/v1/teardown", {
    token: tier.endpoint.token,
    body: { spec, force: true },
  });
  const forcedMs = Date.now() - t1;
  if (forced.status !== 200)
    throw new Error(`${tier.name}: forced teardown: HTTP ${forced.status}: ${forced.text}`);
  const vgs = await tier.report("vgs", "vg_name");
  expectEqual(
    vgs.map((v) => v.vg_name).filter((n) => n === tier.dataVg || n === tier.fastVg),
    [],
    `${tier.name}: volume groups after a forced teardown`,
  );
  const paths = new Set([...DATA_DISKS, "f" as const].map((d) => tier.path(d)));
  expectEqual(
    (await tier.report("pvs", "pv_name")).map((p) => p.pv_name).filter((n) => paths.has(n!)),
    [],
    `${tier.name}: physical volumes on the test's disks after a forced teardown`,
  );
  const lvmd = YAML.parse((await tier.readLvmd()) ?? "{}") as Record<string, unknown>;
  expectEqual(lvmd["device-classes"], [], `${tier.name}: lvmd.yaml after a forced teardown`);
  return { refusedMs, forcedMs };
}

/** Deep equality with a message that says what was compared (usable outside a jest expect chain). */
export function expectEqual(actual: unknown, expected: unknown, what: string): void {
  if (!isDeepStrictEqual(actual, expected))
    throw new Error(`${what}:\n  expected ${JSON.stringify(expected)}\n  got      ${JSON.stringify(actual)}`);
}
