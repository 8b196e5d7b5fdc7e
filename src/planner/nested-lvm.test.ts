import type { VolumeGroup } from "../api";
import type { BlockDevice, LogicalVolume, PhysicalVolume, VolumeGroupInfo } from "../inventory/types";
import { planNode } from "./plan-node";
import type { NodePlan, VolumeGroupPlan } from "./types";
import {
  asMember,
  disk,
  GiB,
  inventory,
  knameGroup,
  mapper,
  nodeSpec,
  volumeGroup,
} from "../../test/support/planner/testing";

/**
 * Nested LVM: a logical volume that is itself a physical volume (lvm's scan_lvs=1). The logical
 * volumes of our own groups are left out of the candidates silently (docs/device-selection.md), but
 * a device that is a physical volume keeps its physical-volume treatment first: a member stays in
 * its group's view (staying, or leaving when its selector drops it), any other PV is excluded with
 * its reasons; and a logical volume belongs to the group whose physical volume it sits on directly.
 */

const sda = disk("sda");
const sdb = disk("sdb");
/** A 40Gi logical volume on sda, /dev/mapper/<vg>-nested (dm-0). */
const nestedOn = (vg: string): BlockDevice =>
  mapper(0, `${vg}-nested`, { type: "lvm", parent: "/dev/sda", size: 40 * GiB });
/** A logical volume (dm-1) stacked on the nested one, /dev/mapper/<vg>-<name>. */
const lvOnNested = (vg: string, name: string): BlockDevice =>
  mapper(1, `${vg}-${name}`, { type: "lvm", parent: "/dev/dm-0", size: 30 * GiB });
const linearLv = (vg: string, name: string): LogicalVolume => ({
  name,
  vgName: vg,
  uuid: `${vg}-${name}`,
  size: 40 * GiB,
  attr: "-wi-a-----",
  tags: [],
});
const bySize: VolumeGroup["deviceSelector"] = {
  deviceSelectorTerms: [{ matchExpressions: [{ key: "size", operator: "GreaterThan", values: ["1Gi"] }] }],
};
const sizeBelow = (limit: string): VolumeGroup["deviceSelector"] => ({
  deviceSelectorTerms: [{ matchExpressions: [{ key: "size", operator: "LessThan", values: [limit] }] }],
});

/** What a plan says of one group: its members staying, those leaving, excluded devices with reasons. */
function view(plan: NodePlan, name: string) {
  const g: VolumeGroupPlan = plan.volumeGroups.find((v) => v.name === name)!;
  return {
    claimed: g.claimed.map((c) => `${c.path}${c.member ? " (member)" : ""}`),
    leaving: (g.leaving ?? []).map((c) => c.path),
    excluded: Object.fromEntries(g.excluded.map((e) => [e.path ?? e.kname, e.reasons])),
    actions: plan.actions.filter((a) => a.volumeGroup === name).map((a) => `${a.op} ${a.device ?? ""}`),
    blocked: plan.blocked.filter((b) => b.volumeGroup === name).map((b) => b.reason),
  };
}

describe("an LV of our group outer (on sda) that is a physical volume of our group inner (with sdb)", () => {
  const nested = asMember(nestedOn("outer"));
  const outer = volumeGroup("outer", [{ device: asMember(sda), used: 10240 }]);
  const inner = volumeGroup("inner", [{ device: asMember(sdb) }, { device: nested }]);
  const node = inventory([asMember(sda), asMember(sdb), nested], {
    pvs: [...outer.pvs, ...inner.pvs],
    vgs: [outer.vg, inner.vg],
    lvs: [linearLv("outer", "nested")],
  });
  const plan = (innerSelector: VolumeGroup["deviceSelector"]) =>
    view(
      planNode(
        node,
        nodeSpec([knameGroup("outer", ["sda"]), { name: "inner", deviceSelector: innerSelector }], []),
      ),
      "inner",
    );

  test.each([
    {
      why: "inner selects both members by size: both stay, the nested one is not dropped",
      selector: bySize,
      claimed: ["/dev/mapper/outer-nested (member)", "/dev/sdb (member)"],
      leaving: [],
      blocked: [],
    },
    {
      why: "inner's selector names the nested member: it stays (the named path, unchanged)",
      selector: knameGroup("inner", ["sdb", "/dev/mapper/outer-nested"]).deviceSelector,
      claimed: ["/dev/mapper/outer-nested (member)", "/dev/sdb (member)"],
      leaving: [],
      blocked: [],
    },
    {
      why: "inner's selector drops the nested member: it leaves, its extents moved to sdb",
      selector: knameGroup("inner", ["sdb"]).deviceSelector,
      claimed: ["/dev/sdb (member)"],
      leaving: ["/dev/mapper/outer-nested"],
      blocked: [],
    },
    {
      why: "inner selects only the nested member (smaller than 60Gi): sdb leaves onto it, not blocked as if inner selected none",
      selector: sizeBelow("60Gi"),
      claimed: ["/dev/mapper/outer-nested (member)"],
      leaving: ["/dev/sdb"],
      blocked: [],
    },
  ])("$why", ({ selector, claimed, leaving, blocked }) => {
    const v = plan(selector);
    expect(v.claimed).toEqual(claimed);
    expect(v.leaving).toEqual(leaving);
    expect(v.blocked).toEqual(blocked);
    expect(v.excluded["/dev/mapper/outer-nested"]).toBeUndefined();
    for (const d of leaving)
      expect(v.actions).toEqual(expect.arrayContaining([`vgreduce ${d}`, `pvremove ${d}`]));
  });
});

describe("an LV of our group outer that is a physical volume of no group of this spec", () => {
  type Owner = { vg?: VolumeGroupInfo; pv: PhysicalVolume };
  const orphan: Owner = {
    pv: {
      device: "/dev/mapper/outer-nested",
      uuid: "orphan-pv",
      vgName: "",
      size: 40 * GiB,
      free: 40 * GiB,
      tags: [],
    },
  };
  const owned = (name: string, tags?: string[]): Owner => {
    const g = volumeGroup(name, [{ device: asMember(nestedOn("outer")) }], tags ? { tags } : {});
    return { vg: g.vg, pv: g.pvs[0]! };
  };

  test.each([
    {
      what: "a foreign group's",
      owner: owned("legacy", []),
      reason:
        "/dev/mapper/outer-nested is a physical volume of volume group legacy, which pulumi-lvm does not own",
    },
    {
      what: "an unmanaged group's (ours, not in this spec)",
      owner: owned("old"),
      reason:
        "/dev/mapper/outer-nested is a physical volume of volume group old, which this spec does not name",
    },
    {
      what: "an orphan",
      owner: orphan,
      reason: expect.stringContaining(
        "/dev/mapper/outer-nested is an LVM physical volume in no volume group",
      ),
    },
  ])(
    "$what physical volume is excluded with its reasons when a size selector matches it",
    ({ owner, reason }) => {
      const outer = volumeGroup("outer", [{ device: asMember(sda), used: 10240 }]);
      const node = inventory([asMember(sda), sdb, asMember(nestedOn("outer"))], {
        pvs: [...outer.pvs, owner.pv],
        vgs: [outer.vg, ...(owner.vg ? [owner.vg] : [])],
        lvs: [linearLv("outer", "nested")],
      });
      const v = view(
        planNode(
          node,
          nodeSpec([knameGroup("outer", ["sda"]), { name: "fresh", deviceSelector: bySize }], []),
        ),
        "fresh",
      );
      expect(v.excluded["/dev/mapper/outer-nested"]).toEqual(
        expect.arrayContaining([
          "/dev/mapper/outer-nested is an LVM logical volume; volume groups are not built on logical volumes",
          reason,
        ]),
      );
      expect(v.claimed).toEqual(["/dev/sdb"]);
      expect(v.actions.some((a) => a.includes("outer-nested"))).toBe(false);
    },
  );
});

describe("a logical volume belongs to the group whose physical volume it sits on directly", () => {
  test("inner's LV on a foreign group's LV that is inner's member: left out silently, as inner's own", () => {
    const legacy = volumeGroup("legacy", [{ device: asMember(sda), used: 10240 }], { tags: [] });
    const nested = asMember(nestedOn("legacy"));
    const inner = volumeGroup("inner", [{ device: asMember(sdb) }, { device: nested }]);
    const node = inventory([asMember(sda), asMember(sdb), nested, lvOnNested("inner", "data")], {
      pvs: [...legacy.pvs, ...inner.pvs],
      vgs: [legacy.vg, inner.vg],
      lvs: [linearLv("legacy", "nested"), { ...linearLv("inner", "data"), size: 30 * GiB }],
    });
    const v = view(planNode(node, nodeSpec([{ name: "inner", deviceSelector: bySize }], [])), "inner");
    expect(v.claimed).toEqual(["/dev/mapper/legacy-nested (member)", "/dev/sdb (member)"]);
    expect(v.excluded["/dev/mapper/inner-data"]).toBeUndefined();
  });

  test("a foreign group's LV on our LV that is the foreign group's PV: excluded with the reason, not ours", () => {
    const outer = volumeGroup("outer", [{ device: asMember(sda), used: 10240 }]);
    const nested = asMember(nestedOn("outer"));
    const legacy = volumeGroup("legacy", [{ device: nested, used: 7680 }], { tags: [] });
    const node = inventory([asMember(sda), sdb, nested, lvOnNested("legacy", "data")], {
      pvs: [...outer.pvs, ...legacy.pvs],
      vgs: [outer.vg, legacy.vg],
      lvs: [linearLv("outer", "nested"), { ...linearLv("legacy", "data"), size: 30 * GiB }],
    });
    const v = view(
      planNode(node, nodeSpec([knameGroup("outer", ["sda"]), { name: "fresh", deviceSelector: bySize }], [])),
      "fresh",
    );
    expect(v.excluded["/dev/mapper/legacy-data"]).toContain(
      "/dev/mapper/legacy-data is an LVM logical volume; volume groups are not built on logical volumes",
    );
  });
});
