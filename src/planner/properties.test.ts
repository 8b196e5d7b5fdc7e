import fc from "fast-check";
import type { NodeInventory } from "../inventory/types";
import { OWNER_TAG } from "../inventory/types";
import { planNode } from "./plan-node";
import { applyPlanEffects } from "./simulate";
import { nestedNodeArb, nodeArb, specArb } from "../../test/support/planner/arbitraries";
import type { NodePlan } from "./types";

/**
 * Properties over generated nodes and specs: whatever the disks and the spec, the plan never claims a
 * device twice, never writes a device with a signature without the opt-in, never touches a foreign
 * volume group's devices, does not depend on input order, runs under lvm's rules (the simulator
 * throws where lvm would refuse or prompt) and converges.
 */

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

test("nested LVM: every physical volume of a group the spec names stays in its view, other PVs are never written", () => {
  fc.assert(
    fc.property(nestedNodeArb, specArb, (inv, spec) => {
      const plan = planNode(inv, spec);
      const byPath = new Map(inv.devices.map((d) => [d.path, d]));
      const ours = new Set(inv.vgs.filter((vg) => vg.tags.includes(OWNER_TAG)).map((vg) => vg.name));
      const touched = devicesIn(plan);
      for (const pv of inv.pvs) {
        const kname = byPath.get(pv.device)!.kname;
        const g = plan.volumeGroups.find((v) => v.name === pv.vgName);
        if (g && ours.has(pv.vgName)) {
          // A member is claimed (staying) or leaving: never dropped from its group's view.
          const seen = [...g.claimed.filter((c) => c.member), ...(g.leaving ?? [])].map((c) => c.kname);
          expect(seen).toContain(kname);
        } else if (pv.vgName) expect(touched.has(pv.device)).toBe(false);
      }
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
