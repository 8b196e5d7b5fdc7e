import fc from "fast-check";
import type { DeviceClass, LVMNodeSpec, VolumeGroup } from "../api";
import type {
  BlockDevice,
  LogicalVolume,
  NodeInventory,
  PhysicalVolume,
  VolumeGroupInfo,
} from "../inventory/types";
import { OWNER_TAG } from "../inventory/types";
import type { DeviceRequirement } from "./device-selector";
import { planNode } from "./plan-node";
import { applyPlanEffects } from "./simulate";
import {
  asMember,
  disk,
  GiB,
  MiB,
  partition,
  signature,
  thinPoolLv,
  volumeGroup,
} from "../../test/support/planner/testing";
import type { NodePlan } from "./types";

/**
 * Properties over generated nodes and specs: whatever the disks and the spec, the plan never claims a
 * device twice, never writes a device with a signature without the opt-in, never touches a foreign
 * volume group's devices, does not depend on input order, runs under lvm's rules (the simulator
 * throws where lvm would refuse or prompt) and converges.
 */

const NAMES = ["sdb", "sdc", "sdd", "sde", "sdf", "sdg"] as const;
type Kind =
  | "blank"
  | "xfs"
  | "mounted"
  | "readonly"
  | "small"
  | "partitioned"
  | "vg1"
  | "vg2"
  | "foreign"
  | "orphan"
  | "unprobed";
const KINDS: Kind[] = [
  "blank",
  "blank",
  "blank",
  "xfs",
  "mounted",
  "readonly",
  "small",
  "partitioned",
  "vg1",
  "vg1",
  "vg2",
  "foreign",
  "orphan",
  "unprobed",
];

const diskArb = fc.record({
  kind: fc.constantFrom(...KINDS),
  size: fc.constantFrom(20 * GiB, 50 * GiB, 100 * GiB),
  usedPercent: fc.constantFrom(0, 0, 30, 80),
  serial: fc.option(fc.constantFrom("S1", "S2", "S3"), { nil: undefined }),
  joinedAsItself: fc.boolean(),
});

const selectorArb: fc.Arbitrary<DeviceRequirement[]> = fc.oneof(
  fc
    .subarray([...NAMES, "sdz"], { minLength: 1 })
    .map((values): DeviceRequirement[] => [{ key: "kname", operator: "In", values }]),
  fc.constant<DeviceRequirement[]>([{ key: "kname", operator: "Any" }]),
  fc.constant<DeviceRequirement[]>([
    { key: "kname", operator: "Any" },
    { key: "size", operator: "GreaterThan", values: ["30Gi"] },
  ]),
  fc.constant<DeviceRequirement[]>([{ key: "serial", operator: "In", values: ["S1", "S2"] }]),
);

const specArb = fc
  .record({
    groups: fc.array(fc.record({ selector: selectorArb, wipe: fc.boolean() }), {
      minLength: 1,
      maxLength: 3,
    }),
    pool: fc.constantFrom<number | "thick" | undefined>(50, 90, 100, "thick", undefined),
  })
  .map(({ groups, pool }): LVMNodeSpec => {
    const volumeGroups: VolumeGroup[] = groups.map((g, i) => ({
      name: `vg${i + 1}`,
      deviceSelector: {
        deviceSelectorTerms: [
          {
            matchExpressions: g.selector.map((r) => ({
              ...r,
              ...(r.values ? { values: [...r.values] } : {}),
            })),
          },
        ],
      },
      ...(g.wipe ? { forceWipeDevicesAndDestroyAllData: true } : {}),
    }));
    const deviceClasses: DeviceClass[] =
      pool === undefined
        ? []
        : pool === "thick"
          ? [{ name: "fast", strategy: "Thick", volumeGroup: "vg1" }]
          : [
              {
                name: "thin",
                strategy: "Thin",
                volumeGroup: "vg1",
                default: true,
                thin: { poolName: "pool0", sizePercent: pool, overprovisionRatio: 5 },
              },
            ];
    return { volumeGroups, deviceClasses };
  });

const nodeArb = fc
  .record({ disks: fc.array(diskArb, { minLength: 1, maxLength: NAMES.length }), withPool: fc.boolean() })
  .map(({ disks, withPool }) => buildNode(disks, withPool));

type DiskSpec = typeof diskArb extends fc.Arbitrary<infer T> ? T : never;

function buildNode(disks: readonly DiskSpec[], withPool: boolean): NodeInventory {
  const devices: BlockDevice[] = [];
  const members: Record<
    "vg1" | "vg2" | "foreign",
    { device: BlockDevice; used: number; joinedAs: string | null }[]
  > = { vg1: [], vg2: [], foreign: [] };
  const orphans: PhysicalVolume[] = [];
  disks.forEach((d, i) => {
    const name = NAMES[i]!;
    const base = disk(name, {
      size: d.kind === "small" ? 512 * MiB : d.size,
      ...(d.serial ? { serial: `${d.serial}-${name}` } : {}),
      symlinks: [`/dev/disk/by-id/ata-${name.toUpperCase()}`],
    });
    switch (d.kind) {
      case "blank":
      case "small":
        devices.push(base);
        break;
      case "xfs":
        devices.push({ ...base, signatures: [signature("xfs")] });
        break;
      case "mounted":
        devices.push({ ...base, signatures: [signature("ext4")], mountpoints: ["/var/lib/data"] });
        break;
      case "readonly":
        devices.push({ ...base, readOnly: true });
        break;
      case "unprobed":
        devices.push({ ...base, probed: false });
        break;
      case "partitioned":
        devices.push(
          { ...base, signatures: [signature("gpt")] },
          partition(name, 1, { size: 5 * GiB }),
          partition(name, 2, { size: d.size - 6 * GiB }),
        );
        break;
      case "orphan":
        devices.push(asMember(base));
        orphans.push({
          device: base.path,
          uuid: `orphan-${name}`,
          vgName: "",
          size: base.size,
          free: base.size,
          tags: [],
        });
        break;
      default: {
        const used = Math.floor(((d.size / (4 * MiB)) * d.usedPercent) / 100);
        devices.push(asMember(base));
        members[d.kind].push({
          device: base,
          used: d.kind === "vg1" && withPool ? used : 0,
          joinedAs: d.joinedAsItself ? base.kname : null,
        });
      }
    }
  });
  const pvs: PhysicalVolume[] = [...orphans];
  const vgs: VolumeGroupInfo[] = [];
  const lvs: LogicalVolume[] = [];
  for (const [name, list] of Object.entries(members)) {
    if (!list.length) continue;
    const g = volumeGroup(name === "foreign" ? "legacy" : name, list, name === "foreign" ? { tags: [] } : {});
    pvs.push(...g.pvs);
    vgs.push(g.vg);
    const used = list.reduce((s, m) => s + m.used, 0);
    if (name === "vg1" && withPool && used > 0) lvs.push(thinPoolLv("vg1", "pool0", used));
  }
  const children = new Map<string, string[]>();
  for (const d of devices) if (d.parent) children.set(d.parent, [...(children.get(d.parent) ?? []), d.kname]);
  return {
    node: "prop",
    labels: {},
    devices: devices.map((d) => ({ ...d, children: children.get(d.kname) ?? [] })),
    pvs,
    vgs,
    lvs,
  };
}

const RUNS = { numRuns: 300 };

const devicesIn = (plan: NodePlan) =>
  new Set(
    plan.actions.flatMap((a) => [
      ...(a.device ? [a.device] : []),
      ...(a.devices ?? []),
      ...a.argv.filter((x) => x.startsWith("/dev/")),
    ]),
  );

test("no device is claimed by two volume groups", () => {
  fc.assert(
    fc.property(nodeArb, specArb, (inv, spec) => {
      const claimed = planNode(inv, spec).volumeGroups.flatMap((g) => g.claimed.map((c) => c.kname));
      expect(new Set(claimed).size).toBe(claimed.length);
    }),
    RUNS,
  );
});

test("no device with a signature is claimed or written without forceWipeDevicesAndDestroyAllData", () => {
  fc.assert(
    fc.property(nodeArb, specArb, (inv, spec) => {
      const plan = planNode(inv, spec);
      const byKname = new Map(inv.devices.map((d) => [d.kname, d]));
      for (const g of plan.volumeGroups) {
        const wipe =
          spec.volumeGroups.find((v) => v.name === g.name)!.forceWipeDevicesAndDestroyAllData === true;
        for (const c of g.claimed.filter((x) => !x.member)) {
          const types = [...new Set(byKname.get(c.kname)!.signatures.map((s) => s.type))];
          if (types.length === 0) continue;
          expect(wipe).toBe(true);
          expect(c.wipe).toEqual(types);
        }
      }
      // Every pvcreate of a device with a signature is preceded by its wipefs.
      plan.actions.forEach((a, i) => {
        if (a.op !== "pvcreate") return;
        const d = inv.devices.find((x) => x.path === a.device)!;
        if (d.signatures.length)
          expect(plan.actions.slice(0, i).some((w) => w.op === "wipefs" && w.device === a.device)).toBe(true);
      });
    }),
    RUNS,
  );
});

test("devices of volume groups we do not own never appear in any action", () => {
  fc.assert(
    fc.property(nodeArb, specArb, (inv, spec) => {
      const foreignVgs = new Set(
        inv.vgs
          .filter((vg) => !vg.tags.includes(OWNER_TAG) || !spec.volumeGroups.some((s) => s.name === vg.name))
          .map((vg) => vg.name),
      );
      const foreignDevices = inv.pvs.filter((pv) => foreignVgs.has(pv.vgName)).map((pv) => pv.device);
      const touched = devicesIn(planNode(inv, spec));
      for (const d of foreignDevices) expect(touched.has(d)).toBe(false);
      for (const a of planNode(inv, spec).actions)
        if (a.volumeGroup) expect(foreignVgs.has(a.volumeGroup)).toBe(false);
    }),
    RUNS,
  );
});

test("the order of the inventory changes neither the plan nor its hash", () => {
  fc.assert(
    fc.property(nodeArb, specArb, fc.nat(), (inv, spec, seed) => {
      const shuffle = <T>(xs: readonly T[]) => {
        const out = [...xs];
        let s = seed + 1;
        for (let i = out.length - 1; i > 0; i--) {
          s = (s * 1103515245 + 12345) % 2 ** 31;
          const j = s % (i + 1);
          [out[i], out[j]] = [out[j]!, out[i]!];
        }
        return out;
      };
      const shuffled: NodeInventory = {
        ...inv,
        devices: shuffle(inv.devices),
        pvs: shuffle(inv.pvs),
        vgs: shuffle(inv.vgs),
        lvs: shuffle(inv.lvs),
      };
      expect(planNode(shuffled, spec)).toEqual(planNode(inv, spec));
    }),
    RUNS,
  );
});

test("plans run under lvm's rules and converge: applied, planning again gives no actions", () => {
  fc.assert(
    fc.property(nodeArb, specArb, (inv, spec) => {
      const first = planNode(inv, spec);
      const after = applyPlanEffects(inv, first);
      const second = planNode(after, spec, { currentLvmdConfig: first.lvmd });
      // A device that leaves one group for another, or a pool too large for an estimate, takes one
      // more plan per step: converged after at most one plan per device.
      const handover = first.volumeGroups.some((g) =>
        g.excluded.some((e) => e.reasons.some((r) => r.includes("can take it once it has left"))),
      );
      const deferred = first.blocked.some((b) => b.reason.includes("by a later plan"));
      if (!handover && !deferred) expect(second.actions).toEqual([]);
      let state = after;
      let plan = second;
      for (let round = 0; round < inv.devices.length && plan.actions.length; round++) {
        state = applyPlanEffects(state, plan);
        plan = planNode(state, spec, { currentLvmdConfig: plan.lvmd });
      }
      expect(plan.actions).toEqual([]);
    }),
    RUNS,
  );
});

test("after a kernel rename no member leaves its group", () => {
  fc.assert(
    fc.property(nodeArb, specArb, fc.nat(), (inv, spec, seed) => {
      const first = planNode(inv, spec);
      const converged = applyPlanEffects(inv, first);
      const plain = converged.devices
        .filter((d) => d.type === "disk" && d.children.length === 0)
        .map((d) => d.kname);
      const rotated = plain.map(
        (_, i) => plain[(i + 1 + (seed % Math.max(1, plain.length))) % plain.length]!,
      );
      const rename = new Map(plain.map((k, i) => [k, rotated[i]!]));
      const renamed = renameDevices(converged, rename);
      const before = planNode(converged, spec, { currentLvmdConfig: first.lvmd });
      const after = planNode(renamed, spec, { currentLvmdConfig: first.lvmd });
      const members = (p: NodePlan) =>
        p.volumeGroups.flatMap((g) => g.claimed.filter((c) => c.member).map((c) => `${g.name}:${c.id}`));
      const leaving = (p: NodePlan) =>
        p.volumeGroups.flatMap((g) => (g.leaving ?? []).map((c) => `${g.name}:${c.id}`));
      // Every member that stayed before the rename stays after it; nothing leaves that was not leaving.
      expect(members(after)).toEqual(expect.arrayContaining(members(before)));
      expect(leaving(before)).toEqual(expect.arrayContaining(leaving(after)));
    }),
    RUNS,
  );
});

/** The same node after a reboot that gave disks other kernel names (their by-id links stay theirs). */
function renameDevices(inv: NodeInventory, rename: ReadonlyMap<string, string>): NodeInventory {
  const r = (k: string) => rename.get(k) ?? k;
  return {
    ...inv,
    devices: inv.devices.map((d) => ({
      ...d,
      kname: r(d.kname),
      path: r(d.path),
      ...(d.parent ? { parent: r(d.parent) } : {}),
      children: d.children.map(r),
    })),
    pvs: inv.pvs.map((pv) => ({ ...pv, device: r(pv.device) })),
  };
}
