import fc from "fast-check";
import { syntheticNodeInventories, syntheticNodeInventory } from "./synthetic";
import { OWNER_TAG, type NodeInventory } from "./types";

describe("syntheticNodeInventory", () => {
  it("is deterministic: the same (seed, index) gives the same node, alone or within a fleet", () => {
    const fleet = syntheticNodeInventories(20, { seed: 42 });
    expect(syntheticNodeInventory(13, { seed: 42 })).toEqual(fleet[13]);
    expect(syntheticNodeInventories(20, { seed: 42 })).toEqual(fleet);
    expect(syntheticNodeInventory(13, { seed: 43 })).not.toEqual(fleet[13]);
  });

  it("has exactly devicesPerNode devices, with unique knames and unique disk identities", () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.nat(100_000),
        fc.integer({ min: 1, max: 64 }),
        (seed, index, devicesPerNode) => {
          const node = syntheticNodeInventory(index, { seed, devicesPerNode });
          expect(node.devices).toHaveLength(devicesPerNode);
          expect(new Set(node.devices.map((d) => d.kname)).size).toBe(devicesPerNode);
          const disks = node.devices.filter((d) => d.type === "disk");
          expect(new Set(disks.map((d) => d.wwn)).size).toBe(disks.length);
          expect(new Set(disks.map((d) => d.serial)).size).toBe(disks.length);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("is internally consistent: partitions and disks, PVs and signatures, VGs and their PVs, owned by tag", () => {
    fc.assert(
      fc.property(fc.integer(), fc.nat(100_000), (seed, index) => {
        const node = syntheticNodeInventory(index, { seed });
        const byKname = new Map(node.devices.map((d) => [d.kname, d]));
        for (const d of node.devices) {
          if (d.parent) expect(byKname.get(d.parent)?.children).toContain(d.kname);
          for (const c of d.children) expect(byKname.get(c)?.parent).toBe(d.kname);
        }
        for (const pv of node.pvs) {
          expect(byKname.get(pv.device)?.signatures.map((s) => s.type)).toEqual(["LVM2_member"]);
          expect(byKname.get(pv.device)?.signatures[0]?.uuid).toBe(pv.uuid);
        }
        for (const vg of node.vgs) {
          const members = node.pvs.filter((pv) => pv.vgName === vg.name);
          expect(members.reduce((n, pv) => n + pv.size, 0)).toBe(vg.size);
          expect(members.reduce((n, pv) => n + pv.free, 0)).toBe(vg.free);
          expect(vg.size).toBe(vg.extentCount * vg.extentSize);
          expect(vg.free).toBe(vg.freeExtentCount * vg.extentSize);
          expect(members.every((pv) => pv.tags.includes(OWNER_TAG) === vg.tags.includes(OWNER_TAG))).toBe(
            true,
          );
          const used = node.lvs
            .filter((lv) => lv.vgName === vg.name && lv.attr[0] !== "t")
            .reduce((n, lv) => n + lv.size, 0);
          expect(used).toBe(vg.size - vg.free);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("varies across a fleet: every kind of device the planner must tell apart shows up", () => {
    const devices = syntheticNodeInventories(200, { seed: 1 }).flatMap((n: NodeInventory) => n.devices);
    const count = (p: (d: (typeof devices)[number]) => boolean) => devices.filter(p).length;
    expect(count((d) => d.type === "disk" && d.signatures.length === 0 && d.probed === true)).toBeGreaterThan(
      1000,
    );
    for (const type of ["LVM2_member", "ext4", "swap", "gpt", "vfat"])
      expect(count((d) => d.signatures.some((s) => s.type === type))).toBeGreaterThan(50);
    expect(count((d) => d.type === "part")).toBeGreaterThan(50);
    expect(count((d) => d.mountpoints.length > 0)).toBeGreaterThan(50);
    expect(count((d) => d.readOnly)).toBeGreaterThan(50);
    expect(count((d) => d.removable)).toBeGreaterThan(50);
    expect(count((d) => d.probed === false && d.probeError !== undefined)).toBeGreaterThan(50);
    expect(count((d) => d.size < 1024 ** 3)).toBeGreaterThan(50);
    expect(count((d) => d.rotational === true)).toBeGreaterThan(500);
  });
});
