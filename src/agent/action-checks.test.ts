import type { PlanAction } from "../planner/types";
import { ActionRefusedError, applyEffect, decide, devicesOf, type LvmState } from "./action-checks";

function state(
  partial: {
    pvs?: Record<string, [string, number?, string[]?]>;
    vgs?: Record<string, string[]>;
    lvs?: Record<string, string>;
    thinMetadata?: Record<string, number>;
    aliases?: Record<string, string>;
    missingPvs?: Record<string, string[]>;
  } = {},
): LvmState {
  return {
    pvs: new Map(
      Object.entries(partial.pvs ?? {}).map(([d, [vg, used, tags]]) => [
        d,
        { vg, used: used ?? 0, tags: tags ?? [] },
      ]),
    ),
    vgs: new Map(Object.entries(partial.vgs ?? {}).map(([n, tags]) => [n, { tags }])),
    lvs: new Map(Object.entries(partial.lvs ?? {})),
    thinMetadata: new Map(Object.entries(partial.thinMetadata ?? {})),
    aliases: new Map(Object.entries(partial.aliases ?? {})),
    missingPvs: new Map(Object.entries(partial.missingPvs ?? {})),
  };
}
const a = (op: PlanAction["op"], argv: string[], extra: Partial<PlanAction> = {}): PlanAction => ({
  op,
  argv,
  reason: "test",
  ...extra,
});
const ours = ["pulumi-lvm"];
const noWipes = new Map<string, string>();

type Row = [string, PlanAction, LvmState, "run" | RegExp];
const rows: Row[] = [
  [
    "pvcreate on a fresh device runs",
    a("pvcreate", ["pvcreate", "/dev/sdb"], { device: "/dev/sdb", volumeGroup: "vg0" }),
    state(),
    "run",
  ],
  [
    "pvcreate on an orphan PV is skipped",
    a("pvcreate", ["pvcreate", "/dev/sdb"], { device: "/dev/sdb" }),
    state({ pvs: { "/dev/sdb": [""] } }),
    /already a physical volume$/,
  ],
  [
    "pvcreate on a PV of our VG is skipped",
    a("pvcreate", ["pvcreate", "/dev/sdb"], { device: "/dev/sdb", volumeGroup: "vg0" }),
    state({ pvs: { "/dev/sdb": ["vg0"] } }),
    /already a physical volume of vg0/,
  ],
  [
    "pvcreate on a PV of another VG is refused",
    a("pvcreate", ["pvcreate", "/dev/sdb"], { device: "/dev/sdb", volumeGroup: "vg0" }),
    state({ pvs: { "/dev/sdb": ["other"] } }),
    /REFUSED.*another volume group, other/,
  ],
  [
    "pvcreate through a symlink sees the kname's PV",
    a("pvcreate", ["pvcreate", "/dev/disk/by-id/x"], { device: "/dev/disk/by-id/x" }),
    state({ pvs: { "/dev/sdb": [""] }, aliases: { "/dev/disk/by-id/x": "/dev/sdb" } }),
    /already/,
  ],
  [
    "vgcreate of a new VG runs",
    a("vgcreate", ["vgcreate", "--addtag", "pulumi-lvm", "vg0", "/dev/sdb"], { volumeGroup: "vg0" }),
    state({ pvs: { "/dev/sdb": [""] } }),
    "run",
  ],
  [
    "vgcreate with a PV already in some VG is refused",
    a("vgcreate", ["vgcreate", "--addtag", "pulumi-lvm", "vg0", "/dev/sdb"]),
    state({ pvs: { "/dev/sdb": ["x"] } }),
    /REFUSED.*already in volume group x/,
  ],
  [
    "vgcreate when our VG exists with the devices is skipped",
    a("vgcreate", ["vgcreate", "--addtag", "pulumi-lvm", "vg0", "/dev/sdb"]),
    state({ vgs: { vg0: ours }, pvs: { "/dev/sdb": ["vg0"] } }),
    /already exists with tag/,
  ],
  [
    "vgcreate when a foreign VG of that name exists is refused",
    a("vgcreate", ["vgcreate", "--addtag", "pulumi-lvm", "vg0", "/dev/sdb"]),
    state({ vgs: { vg0: [] } }),
    /REFUSED.*not created by pulumi-lvm/,
  ],
  [
    "vgextend adding a new PV runs",
    a("vgextend", ["vgextend", "vg0", "/dev/sdc"], { volumeGroup: "vg0" }),
    state({ vgs: { vg0: ours }, pvs: { "/dev/sdc": [""] } }),
    "run",
  ],
  [
    "vgextend when the PV is already in is skipped",
    a("vgextend", ["vgextend", "vg0", "/dev/sdc"]),
    state({ vgs: { vg0: ours }, pvs: { "/dev/sdc": ["vg0"] } }),
    /already in vg0/,
  ],
  [
    "vgextend of a missing VG is refused",
    a("vgextend", ["vgextend", "vg0", "/dev/sdc"]),
    state(),
    /REFUSED.*does not exist/,
  ],
  [
    "vgextend with a PV of another VG is refused",
    a("vgextend", ["vgextend", "vg0", "/dev/sdc"]),
    state({ vgs: { vg0: ours }, pvs: { "/dev/sdc": ["other"] } }),
    /REFUSED.*in volume group other/,
  ],
  [
    "pvmove of an empty PV is skipped",
    a("pvmove", ["pvmove", "/dev/sdc", "/dev/sdb"], { device: "/dev/sdc" }),
    state({ pvs: { "/dev/sdc": ["vg0", 0] } }),
    /no extents allocated/,
  ],
  [
    "pvmove of a used PV runs",
    a("pvmove", ["pvmove", "/dev/sdc", "/dev/sdb"], { device: "/dev/sdc" }),
    state({ pvs: { "/dev/sdc": ["vg0", 4096] } }),
    "run",
  ],
  [
    "vgreduce of an empty member runs",
    a("vgreduce", ["vgreduce", "vg0", "/dev/sdc"]),
    state({ vgs: { vg0: ours }, pvs: { "/dev/sdc": ["vg0"] } }),
    "run",
  ],
  [
    "vgreduce of a device not in the VG is skipped",
    a("vgreduce", ["vgreduce", "vg0", "/dev/sdc"]),
    state({ pvs: { "/dev/sdc": [""] } }),
    /not in vg0/,
  ],
  [
    "vgreduce of a PV holding extents is refused",
    a("vgreduce", ["vgreduce", "vg0", "/dev/sdc"]),
    state({ pvs: { "/dev/sdc": ["vg0", 8] } }),
    /REFUSED.*allocated extents/,
  ],
  [
    "lvmdevices --adddev of a PV runs (lvm answers 0 when it is listed already)",
    a("lvmdevices-adddev", ["lvm", "lvmdevices", "--adddev", "/dev/sdb"], { device: "/dev/sdb" }),
    state({ pvs: { "/dev/sdb": ["vg0"] } }),
    "run",
  ],
  [
    "lvmdevices --adddev of a device that is not a PV is refused",
    a("lvmdevices-adddev", ["lvm", "lvmdevices", "--adddev", "/dev/sdb"], { device: "/dev/sdb" }),
    state(),
    /REFUSED.*\/dev\/sdb is not a physical volume/,
  ],
  [
    "lvmdevices --deldev of an orphan PV runs",
    a("lvmdevices-deldev", ["lvm", "lvmdevices", "--deldev", "/dev/sdc"], { device: "/dev/sdc" }),
    state({ pvs: { "/dev/sdc": [""] } }),
    "run",
  ],
  [
    "lvmdevices --deldev of a PV still in a VG is refused",
    a("lvmdevices-deldev", ["lvm", "lvmdevices", "--deldev", "/dev/sdc"], { device: "/dev/sdc" }),
    state({ pvs: { "/dev/sdc": ["vg0"] } }),
    /REFUSED.*still in volume group vg0: the host's lvm would lose it/,
  ],
  [
    "pvremove of an orphan PV runs",
    a("pvremove", ["pvremove", "/dev/sdc"], { device: "/dev/sdc" }),
    state({ pvs: { "/dev/sdc": [""] } }),
    "run",
  ],
  [
    "pvremove of a non-PV is skipped",
    a("pvremove", ["pvremove", "/dev/sdc"], { device: "/dev/sdc" }),
    state(),
    /not a physical volume/,
  ],
  [
    "pvremove of a PV still in a VG is refused",
    a("pvremove", ["pvremove", "/dev/sdc"], { device: "/dev/sdc" }),
    state({ pvs: { "/dev/sdc": ["vg0"] } }),
    /REFUSED.*still in volume group vg0/,
  ],
  [
    "lvcreate of a missing thin pool runs",
    a(
      "lvcreate-thinpool",
      [
        "lvcreate",
        "--type",
        "thin-pool",
        "--name",
        "pool0",
        "--extents",
        "90%VG",
        "--zero",
        "y",
        "--addtag",
        "pulumi-lvm",
        "vg0",
      ],
      { volumeGroup: "vg0" },
    ),
    state({ vgs: { vg0: ours } }),
    "run",
  ],
  [
    "lvcreate of an existing thin pool is skipped",
    a("lvcreate-thinpool", [
      "lvcreate",
      "--type",
      "thin-pool",
      "--name",
      "pool0",
      "--extents",
      "90%VG",
      "vg0",
    ]),
    state({ lvs: { "vg0/pool0": "twi-a-tz--" } }),
    /thin pool vg0\/pool0 already exists/,
  ],
  [
    "lvcreate over a linear LV of that name is refused",
    a("lvcreate-thinpool", [
      "lvcreate",
      "--type",
      "thin-pool",
      "--name",
      "pool0",
      "--extents",
      "90%VG",
      "vg0",
    ]),
    state({ lvs: { "vg0/pool0": "-wi-a-----" } }),
    /REFUSED.*not a thin pool/,
  ],
  [
    "lvextend of a missing pool is refused",
    a("lvextend-thinpool", ["lvextend", "--extents", "100%VG", "vg0/pool0"]),
    state(),
    /REFUSED.*does not exist/,
  ],
  [
    "metadata growth of a pool whose metadata is smaller runs",
    a("lvextend-thinpool-metadata", ["lvextend", "--poolmetadatasize", "8388608b", "vg0/pool0"]),
    state({ lvs: { "vg0/pool0": "twi-aotz--" }, thinMetadata: { "vg0/pool0": 4194304 } }),
    "run",
  ],
  [
    "metadata growth of a pool whose metadata is already that large is skipped",
    a("lvextend-thinpool-metadata", ["lvextend", "--poolmetadatasize", "8388608b", "vg0/pool0"]),
    state({ lvs: { "vg0/pool0": "twi-aotz--" }, thinMetadata: { "vg0/pool0": 8388608 } }),
    /already has 8388608 bytes/,
  ],
  [
    "metadata growth of a pool whose metadata size is unknown (just extended) runs",
    a("lvextend-thinpool-metadata", ["lvextend", "--poolmetadatasize", "8388608b", "vg0/pool0"]),
    state({ lvs: { "vg0/pool0": "twi-aotz--" } }),
    "run",
  ],
  [
    "metadata growth of a missing pool is refused",
    a("lvextend-thinpool-metadata", ["lvextend", "--poolmetadatasize", "8388608b", "vg0/pool0"]),
    state(),
    /REFUSED.*does not exist/,
  ],
  [
    "metadata growth of a logical volume that is not a thin pool is refused",
    a("lvextend-thinpool-metadata", ["lvextend", "--poolmetadatasize", "8388608b", "vg0/pool0"]),
    state({ lvs: { "vg0/pool0": "-wi-a-----" } }),
    /REFUSED.*not a thin pool/,
  ],
  [
    "metadata growth without a byte size is refused",
    a("lvextend-thinpool-metadata", ["lvextend", "--poolmetadatasize", "8m", "vg0/pool0"]),
    state({ lvs: { "vg0/pool0": "twi-aotz--" } }),
    /REFUSED.*<bytes>b/,
  ],
  [
    "lvremove of a missing pool is skipped",
    a("lvremove-thinpool", ["lvremove", "vg0/pool0"]),
    state(),
    /vg0\/pool0 does not exist/,
  ],
  [
    "lvremove of our pool runs",
    a("lvremove-thinpool", ["lvremove", "vg0/pool0"]),
    state({ lvs: { "vg0/pool0": "twi---tz--" } }),
    "run",
  ],
  [
    "vgremove of a missing VG is skipped",
    a("vgremove", ["vgremove", "vg0"], { volumeGroup: "vg0" }),
    state(),
    /does not exist/,
  ],
  [
    "vgremove of a foreign VG is refused",
    a("vgremove", ["vgremove", "--force", "vg0"]),
    state({ vgs: { vg0: ["someone"] } }),
    /REFUSED.*not created by pulumi-lvm/,
  ],
  ["vgremove of our VG runs", a("vgremove", ["vgremove", "vg0"]), state({ vgs: { vg0: ours } }), "run"],
  [
    "pvchange adding a tag runs",
    a("pvchange", ["pvchange", "--addtag", "pulumi-lvm.kname=/dev/sdb", "/dev/sdb"], { device: "/dev/sdb" }),
    state({ pvs: { "/dev/sdb": ["vg0"] } }),
    "run",
  ],
  [
    "pvchange of a tag already there is skipped",
    a("pvchange", ["pvchange", "--addtag", "t1", "/dev/sdb"], { device: "/dev/sdb" }),
    state({ pvs: { "/dev/sdb": ["vg0", 0, ["t1"]] } }),
    /already carries tag t1/,
  ],
  [
    "pvchange of a non-PV is refused",
    a("pvchange", ["pvchange", "--addtag", "t1", "/dev/sdb"], { device: "/dev/sdb" }),
    state(),
    /REFUSED.*not a physical volume/,
  ],
  [
    "lvchange-deactivate of an active pool runs",
    a("lvchange-deactivate", ["lvchange", "--activate", "n", "vg0/pool0"]),
    state({ lvs: { "vg0/pool0": "twi-a-tz--" } }),
    "run",
  ],
  [
    "lvchange-deactivate of an inactive pool is skipped",
    a("lvchange-deactivate", ["lvchange", "--activate", "n", "vg0/pool0"]),
    state({ lvs: { "vg0/pool0": "twi---tz--" } }),
    /not active/,
  ],
  [
    "vgcreate names its devices in `devices`",
    a("vgcreate", ["vgcreate", "--addtag", "pulumi-lvm", "vg0", "/dev/sdb"], { devices: ["/dev/sdb"] }),
    state({ pvs: { "/dev/sdb": ["x"] } }),
    /REFUSED.*already in volume group x/,
  ],
  ["write-lvmd-config always runs", a("write-lvmd-config", []), state(), "run"],
  [
    "wipefs of a device already in our VG is skipped",
    a("wipefs", ["wipefs", "--all", "/dev/sdb"], { device: "/dev/sdb", volumeGroup: "vg0" }),
    state({ pvs: { "/dev/sdb": ["vg0"] } }),
    /already a physical volume of vg0/,
  ],
  ...removeMissingRows(),
  [
    "an unknown step is refused",
    a("mkfs" as PlanAction["op"], ["mkfs", "/dev/sdb"]),
    state(),
    /REFUSED.*unknown step/,
  ],
];

/** vgreduce --removemissing: only the missing PVs and lost volumes the plan named, only in a group of ours. */
function removeMissingRows(): Row[] {
  const repair = (force: boolean, lost?: string[]) =>
    a("vgreduce-removemissing", ["vgreduce", "--removemissing", ...(force ? ["--force"] : []), "vg0"], {
      volumeGroup: "vg0",
      missingPvs: ["pv:A"],
      ...(lost ? { lostVolumes: lost, destructive: true } : {}),
    });
  const degraded = (lvs: Record<string, string> = {}, missing = ["pv:A"]) =>
    state({ vgs: { vg0: ours }, lvs, missingPvs: { vg0: missing } });
  return [
    ["vgreduce --removemissing of the named missing PV runs", repair(false), degraded(), "run"],
    [
      "vgreduce --removemissing once the group misses nothing is skipped",
      repair(false),
      state({ vgs: { vg0: ours } }),
      /vg0 misses no physical volume/,
    ],
    [
      "vgreduce --removemissing when another PV went missing since the plan is refused",
      repair(false),
      degraded({}, ["pv:A", "pv:B"]),
      /REFUSED.*pv:B of vg0 went missing after the plan was made/,
    ],
    [
      "vgreduce --removemissing in a group not ours is refused",
      repair(false),
      state({ vgs: { vg0: [] }, missingPvs: { vg0: ["pv:A"] } }),
      /REFUSED.*not created by pulumi-lvm/,
    ],
    [
      "vgreduce --removemissing without --force while a volume has data on the missing PV is refused",
      repair(false),
      degraded({ "vg0/lv1": "-wi-----p-" }),
      /REFUSED.*vg0\/lv1 has data on the missing physical volumes/,
    ],
    [
      "vgreduce --removemissing --force removing the named volumes (a pool with its hidden data) runs",
      repair(true, ["vg0/lv1", "vg0/pool0"]),
      degraded({ "vg0/lv1": "-wi-----p-", "vg0/pool0": "twi---tzp-", "vg0/pool0_tdata": "Twi-----p-" }),
      "run",
    ],
    [
      "vgreduce --removemissing --force when a volume the plan did not name lost data is refused",
      repair(true, ["vg0/lv1"]),
      degraded({ "vg0/lv1": "-wi-----p-", "vg0/lv2": "-wi-----p-" }),
      /REFUSED.*vg0\/lv2 lost data since the plan was made/,
    ],
    [
      "vgreduce --removemissing --force naming no volume is refused",
      a("vgreduce-removemissing", ["vgreduce", "--removemissing", "--force", "vg0"], {
        volumeGroup: "vg0",
        missingPvs: ["pv:A"],
      }),
      degraded({ "vg0/lv1": "-wi-----p-" }),
      /REFUSED.*--force without the logical volumes/,
    ],
  ];
}

describe("decide", () => {
  it.each(rows)("%s", (_what, action, s, expected) => {
    if (expected === "run") return expect(decide(action, s, noWipes)).toEqual({ run: true });
    if (expected.source.startsWith("REFUSED")) {
      expect(() => decide(action, s, noWipes)).toThrow(ActionRefusedError);
      expect(() => decide(action, s, noWipes)).toThrow(
        new RegExp(expected.source.replace(/^REFUSED\.\*/, "")),
      );
      return;
    }
    const d = decide(action, s, noWipes);
    expect(d.run).toBe(false);
    expect(d.run === false && d.skipped).toMatch(expected);
  });

  it("skips a wipe the journal already recorded for that device identity", () => {
    const wipe = a("wipefs", ["wipefs", "--all", "/dev/sdb"], { device: "/dev/sdb", deviceId: "serial:S1" });
    expect(decide(wipe, state(), new Map([["serial:S1", "op-1"]]))).toEqual({
      run: false,
      skipped: "/dev/sdb (serial:S1) was already wiped by operation op-1; a device is never wiped twice",
    });
    expect(decide(wipe, state(), new Map([["serial:OTHER", "op-1"]]))).toEqual({ run: true });
  });
});

describe("applyEffect then decide: every completed step's postcondition holds", () => {
  const steps: PlanAction[] = [
    a("pvcreate", ["pvcreate", "/dev/sdb"], { device: "/dev/sdb" }),
    a("pvcreate", ["pvcreate", "/dev/sdc"], { device: "/dev/sdc" }),
    a("vgcreate", ["vgcreate", "--addtag", "pulumi-lvm", "vg0", "/dev/sdb"], { volumeGroup: "vg0" }),
    a("vgextend", ["vgextend", "vg0", "/dev/sdc"], { volumeGroup: "vg0" }),
    a("pvchange", ["pvchange", "--addtag", "pulumi-lvm.kname=/dev/sdc", "/dev/sdc"], { device: "/dev/sdc" }),
    a(
      "lvcreate-thinpool",
      ["lvcreate", "--type", "thin-pool", "--name", "pool0", "--extents", "90%VG", "vg0"],
      { volumeGroup: "vg0" },
    ),
    a("lvchange-deactivate", ["lvchange", "--activate", "n", "vg0/pool0"], { volumeGroup: "vg0" }),
    a("lvremove-thinpool", ["lvremove", "vg0/pool0"], { volumeGroup: "vg0" }),
    a("vgreduce", ["vgreduce", "vg0", "/dev/sdc"], { volumeGroup: "vg0" }),
    a("pvremove", ["pvremove", "/dev/sdc"], { device: "/dev/sdc" }),
    a("vgremove", ["vgremove", "vg0"], { volumeGroup: "vg0" }),
    a("pvremove", ["pvremove", "/dev/sdb"], { device: "/dev/sdb" }),
  ];
  it("a repair runs once, then is skipped: the group misses nothing, its lost volumes are gone", () => {
    const s = state({ vgs: { vg0: ours }, lvs: { "vg0/lv1": "-wi-----p-" }, missingPvs: { vg0: ["pv:A"] } });
    const repair = a("vgreduce-removemissing", ["vgreduce", "--removemissing", "--force", "vg0"], {
      volumeGroup: "vg0",
      missingPvs: ["pv:A"],
      lostVolumes: ["vg0/lv1"],
    });
    expect(decide(repair, s, noWipes)).toEqual({ run: true });
    applyEffect(repair, s);
    expect(decide(repair, s, noWipes)).toEqual({
      run: false,
      skipped: "volume group vg0 misses no physical volume",
    });
    expect(s.lvs.has("vg0/lv1")).toBe(false);
  });
  it("runs each step once, then skips it when repeated", () => {
    const s = state();
    for (const step of steps) {
      expect(decide(step, s, noWipes)).toEqual({ run: true });
      applyEffect(step, s);
      const again = decide(step, s, noWipes);
      expect(again.run).toBe(false);
    }
    expect(s.pvs.size).toBe(0);
    expect(s.vgs.size).toBe(0);
  });
});

describe("devicesOf", () => {
  it("lists the action's device and every /dev word of its argv", () => {
    expect(
      devicesOf(
        a("vgcreate", ["vgcreate", "--addtag", "pulumi-lvm", "vg0", "/dev/sdb", "/dev/sdc"], {
          device: "/dev/sdb",
        }),
      ),
    ).toEqual(["/dev/sdb", "/dev/sdc"]);
    expect(devicesOf(a("write-lvmd-config", []))).toEqual([]);
  });
});

test("lvextend-thinpool forgets the metadata size (lvm may grow it); lvextend-thinpool-metadata records its target", () => {
  const s = state({ lvs: { "vg0/pool0": "twi-aotz--" }, thinMetadata: { "vg0/pool0": 4194304 } });
  applyEffect(a("lvextend-thinpool", ["lvextend", "--extents", "100", "vg0/pool0"]), s);
  expect(s.thinMetadata.has("vg0/pool0")).toBe(false);
  const grow = a("lvextend-thinpool-metadata", ["lvextend", "--poolmetadatasize", "8388608b", "vg0/pool0"]);
  applyEffect(grow, s);
  expect(s.thinMetadata.get("vg0/pool0")).toBe(8388608);
  expect(decide(grow, s, noWipes)).toMatchObject({ run: false });
});
