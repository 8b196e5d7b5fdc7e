import { readFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import { parseLVMNode, type LVMNodeSpec, type VolumeGroup } from "../api";
import { parseNodeInventory } from "../inventory/parse";
import { OWNER_TAG, type NodeInventory, type RawNodeInventory } from "../inventory/types";
import { planNode } from "./plan-node";
import {
  asMember,
  disk,
  GiB,
  inventory,
  knameGroup,
  mapper,
  nodeSpec,
  partition,
  volumeGroup,
} from "../../test/support/planner/testing";
import type { VolumeGroupPlan } from "./types";

const proposal = parseLVMNode(
  YAML.parse(readFileSync(join(__dirname, "../../test/fixtures/api/proposal-lvmnode.yaml"), "utf8")),
);

/** A node matching the proposal's LVMNode: the encrypted device is absent, the others exist. */
const proposalNode = inventory([
  disk("sda", { size: 200 * GiB }),
  partition("sda", 1, {
    size: 40 * GiB,
    parttype: "c12a7328-f81f-11d2-ba4b-00a0c93ec93b",
    partlabel: "EFI System Partition",
  }),
  partition("sda", 2, { size: 60 * GiB }),
  disk("sdb", { size: 50 * GiB }),
  disk("sdc", { size: 50 * GiB }),
  mapper(0, "some-fallback-device", { size: 50 * GiB, parent: "/dev/sdb" }),
  mapper(1, "some-default-device", { size: 50 * GiB, parent: "/dev/sdc" }),
  disk("somedevwithserial", { size: 2 * GiB, serial: "2313AW459310" }),
]);

function group(plan: { volumeGroups: readonly VolumeGroupPlan[] }, name: string): VolumeGroupPlan {
  return plan.volumeGroups.find((g) => g.name === name)!;
}

describe("the proposal's LVMNode example", () => {
  const plan = planNode(proposalNode, proposal.spec);
  const status = (name: string) => proposal.status!.volumeGroups!.find((g) => g.name === name)!.devices!;

  test("vg1: fallback and default included; the encrypted device excluded with both reasons", () => {
    const vg1 = group(plan, "vg1");
    expect(vg1.claimed.map((c) => ({ kname: c.path }))).toEqual(status("vg1").included);
    expect(vg1.excluded.map((e) => ({ kname: e.kname, reasons: e.reasons }))).toEqual(status("vg1").excluded);
  });

  test("othervg (wildcard): sda2 included; the boot partition and vg1's devices excluded with the proposal's reasons", () => {
    const othervg = group(plan, "othervg");
    expect(othervg.claimed.map((c) => ({ kname: c.path }))).toEqual(status("othervg").included);
    const reasons = othervg.excluded.flatMap((e) => e.reasons);
    for (const e of status("othervg").excluded!) for (const r of e.reasons) expect(reasons).toContain(r);
  });

  test("specific-serials: the device with the serial", () => {
    expect(group(plan, "specific-serials").claimed.map((c) => ({ kname: c.path }))).toEqual(
      status("specific-serials").included,
    );
  });

  test("the fallback meaning is the same whichever alternative is missing", () => {
    const withoutFallback = inventory(
      proposalNode.devices
        .filter((d) => d.kname !== "/dev/dm-0")
        .concat([mapper(2, "some-encrypted-device", { size: 50 * GiB })]),
    );
    const vg1 = group(planNode(withoutFallback, proposal.spec), "vg1");
    expect(vg1.claimed.map((c) => c.path)).toEqual([
      "/dev/mapper/some-default-device",
      "/dev/mapper/some-encrypted-device",
    ]);
    expect(vg1.excluded).toEqual([
      {
        kname: "/dev/mapper/some-fallback-device",
        reasons: [
          "/dev/mapper/some-encrypted-device was found and used instead",
          "/dev/mapper/some-fallback-device was not found",
        ],
      },
    ]);
  });

  test("when both alternatives exist both are used; when none does, only 'not found'", () => {
    const both = inventory([...proposalNode.devices, mapper(2, "some-encrypted-device", { size: 50 * GiB })]);
    expect(group(planNode(both, proposal.spec), "vg1").claimed).toHaveLength(3);
    expect(group(planNode(both, proposal.spec), "vg1").excluded).toEqual([]);
    const neither = inventory(proposalNode.devices.filter((d) => d.kname !== "/dev/dm-0"));
    expect(group(planNode(neither, proposal.spec), "vg1").excluded.map((e) => e.reasons)).toEqual([
      ["/dev/mapper/some-encrypted-device was not found"],
      ["/dev/mapper/some-fallback-device was not found"],
    ]);
  });

  test("an alternative that exists but is excluded is not 'used instead'", () => {
    const busy = inventory(
      proposalNode.devices.map((d) => (d.kname === "/dev/dm-0" ? { ...d, mountpoints: ["/srv"] } : d)),
    );
    const vg1 = group(planNode(busy, proposal.spec), "vg1");
    expect(vg1.excluded.find((e) => e.kname === "/dev/mapper/some-encrypted-device")!.reasons).toEqual([
      "/dev/mapper/some-encrypted-device was not found",
    ]);
  });
});

describe("a device is claimed by at most one volume group", () => {
  const any = (name: string, extra: Partial<VolumeGroup> = {}): VolumeGroup => ({
    name,
    deviceSelector: { deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "Any" }] }] },
    ...extra,
  });
  const inv = inventory([disk("sdb"), disk("sdc"), disk("sdd")]);

  test("two non-wildcard groups selecting one device: neither takes it, both say so", () => {
    const plan = planNode(inv, nodeSpec([knameGroup("a", ["sdb", "sdc"]), knameGroup("b", ["sdc", "sdd"])]));
    expect(group(plan, "a").claimed.map((c) => c.kname)).toEqual(["/dev/sdb"]);
    expect(group(plan, "b").claimed.map((c) => c.kname)).toEqual(["/dev/sdd"]);
    for (const name of ["a", "b"])
      expect(group(plan, name).excluded).toEqual([
        { kname: "/dev/sdc", reasons: ["/dev/sdc is selected by both a and b, so neither uses it"] },
      ]);
  });

  test("three groups", () => {
    const plan = planNode(
      inv,
      nodeSpec([knameGroup("a", ["sdb"]), knameGroup("b", ["sdb"]), knameGroup("c", ["sdb"])]),
    );
    expect(group(plan, "c").excluded[0]!.reasons).toEqual([
      "/dev/sdb is selected by a, b and c, so none of them uses it",
    ]);
  });

  test("a wildcard group only takes what no other group selects", () => {
    const plan = planNode(inv, nodeSpec([any("rest"), knameGroup("fast", ["sdc"])]));
    expect(group(plan, "fast").claimed.map((c) => c.kname)).toEqual(["/dev/sdc"]);
    expect(group(plan, "rest").claimed.map((c) => c.kname)).toEqual(["/dev/sdb", "/dev/sdd"]);
    expect(group(plan, "rest").excluded).toEqual([
      {
        kname: "/dev/sdc",
        reasons: [
          "/dev/sdc is already being used by fast and cannot be used by a wildcard (Any) volumeGroup",
        ],
      },
    ]);
  });

  test("a device another group selects but cannot use is not taken by the wildcard either", () => {
    const plan = planNode(
      inventory([disk("sdb", { readOnly: true }), disk("sdc")]),
      nodeSpec([any("rest"), knameGroup("fast", ["sdb"])]),
    );
    expect(group(plan, "fast").excluded[0]!.reasons).toEqual(["/dev/sdb is read-only"]);
    expect(group(plan, "rest").excluded[0]!.reasons).toEqual([
      "/dev/sdb is selected by fast and cannot be used by a wildcard (Any) volumeGroup",
    ]);
  });

  test("two wildcard groups: a conflict on every device", () => {
    const plan = planNode(inventory([disk("sdb")]), nodeSpec([any("x"), any("y")]));
    expect(group(plan, "x").claimed).toEqual([]);
    expect(group(plan, "y").excluded[0]!.reasons).toEqual([
      "/dev/sdb is selected by both x and y, so neither uses it",
    ]);
  });

  test("a member stays in its group when another group also selects it", () => {
    const a = volumeGroup("a", [{ device: disk("sdb") }]);
    const withA = (devices = [asMember(disk("sdb")), disk("sdc")]): NodeInventory =>
      inventory(devices, { pvs: a.pvs, vgs: [a.vg] });
    const plan = planNode(withA(), nodeSpec([knameGroup("a", ["sdb"]), knameGroup("b", ["sdb", "sdc"])]));
    expect(group(plan, "a").claimed).toMatchObject([{ kname: "/dev/sdb", member: true }]);
    expect(group(plan, "b").claimed.map((c) => c.kname)).toEqual(["/dev/sdc"]);
    expect(group(plan, "b").excluded[0]!.reasons).toEqual([
      "/dev/sdb is selected by both b and a; it stays in a, of which it is already a physical volume",
    ]);
    const wild = planNode(withA(), nodeSpec([knameGroup("a", ["sdb"]), any("b")]));
    expect(group(wild, "b").excluded[0]!.reasons).toEqual([
      "/dev/sdb is already being used by a and cannot be used by a wildcard (Any) volumeGroup",
    ]);
  });

  test("a member leaving its group is not taken by another in the same plan", () => {
    const a = volumeGroup("a", [{ device: disk("sdb") }, { device: disk("sdc") }]);
    const inv2 = inventory([asMember(disk("sdb")), asMember(disk("sdc"))], { pvs: a.pvs, vgs: [a.vg] });
    const plan = planNode(inv2, nodeSpec([knameGroup("a", ["sdb"]), knameGroup("b", ["sdc"])]));
    expect(group(plan, "a").leaving).toMatchObject([{ kname: "/dev/sdc" }]);
    expect(group(plan, "b").claimed).toEqual([]);
    expect(group(plan, "b").excluded[0]!.reasons).toEqual([
      "/dev/sdc is still a physical volume of a, which no longer selects it; b can take it once it has left a",
    ]);
  });

  test("a group whose name a foreign volume group has takes nothing", () => {
    const foreign = volumeGroup("a", [{ device: disk("sdz") }], { tags: [] });
    const plan = planNode(
      inventory([disk("sdb"), asMember(disk("sdz"))], { pvs: foreign.pvs, vgs: [foreign.vg] }),
      nodeSpec([knameGroup("a", ["sdb", "sdz"])]),
    );
    expect(group(plan, "a").claimed).toEqual([]);
    expect(group(plan, "a").excluded.map((e) => e.reasons)).toEqual([
      ["/dev/sdb is not used: a volume group named a exists on this node and pulumi-lvm does not own it"],
      ["/dev/sdz is a physical volume of volume group a, which pulumi-lvm does not own"],
    ]);
    expect(plan.actions).toEqual([]);
  });
});

test("the proposal spec parses as the type the planner takes", () => {
  const spec: LVMNodeSpec = proposal.spec;
  expect(spec.volumeGroups.map((v) => v.name)).toEqual(["vg1", "othervg", "specific-serials"]);
});

describe("logical volumes of our own volume groups are what plans build, not devices to choose from", () => {
  // A real kernel's inventory (qemu guest): vgpl on vda and vdb with a thin pool, thin volumes
  // (mounted) and a snapshot, all stacked on those disks as device-mapper devices. Recorded untagged;
  // tagged here as one of our groups, as after an apply (the bare-hosts example's vg-data and pool0).
  const raw = JSON.parse(
    readFileSync(join(__dirname, "../../test/fixtures/inventory/guest-thin-paths.json"), "utf8"),
  ) as RawNodeInventory;
  const tagged = (r: RawNodeInventory): RawNodeInventory => {
    const lvm = r.lvm as {
      report: Array<{ vg?: Array<Record<string, string>> }>;
    };
    return {
      ...r,
      lvm: {
        report: lvm.report.map((rep) => ({
          ...rep,
          ...(rep.vg ? { vg: rep.vg.map((v) => ({ ...v, vg_tags: OWNER_TAG })) } : {}),
        })),
      },
    };
  };
  const specGroup = (name: string, deviceSelector: VolumeGroup["deviceSelector"]): VolumeGroup => ({
    name,
    deviceSelector,
  });
  const bySize = specGroup("vgpl", {
    deviceSelectorTerms: [
      { matchExpressions: [{ key: "size", operator: "GreaterThan", values: ["100Mi"] }] },
    ],
  });
  const mapperLvs = (vg: VolumeGroupPlan) =>
    vg.excluded.filter((e) => (e.path ?? e.kname).startsWith("/dev/mapper/vgpl-"));

  it("a selector that matches by size: our thin pool and volumes are neither claimed nor listed as excluded", () => {
    const plan = planNode(parseNodeInventory(tagged(raw)), nodeSpec([bySize]));
    const vg = group(plan, "vgpl");
    expect(mapperLvs(vg)).toEqual([]);
    // The members stay; nothing is planned on the logical volumes.
    expect(vg.claimed.filter((c) => c.member).map((c) => c.kname)).toHaveLength(2);
    expect(plan.actions.filter((a) => (a.device ?? "").startsWith("/dev/mapper/"))).toEqual([]);
  });

  it("the plan's hash does not change when a logical volume of ours is unmounted (a pod's volume)", () => {
    const at = "/var/lib/pl-smoke/xfs";
    // Unmounted in both places discovery reads: lsblk's mountpoints and the mount table.
    const unmount = (d: Record<string, unknown>): Record<string, unknown> => ({
      ...d,
      ...(d.mountpoint === at ? { mountpoint: null, mountpoints: [null] } : {}),
      ...(Array.isArray(d.children)
        ? { children: (d.children as Record<string, unknown>[]).map(unmount) }
        : {}),
    });
    const lsblk = raw.lsblk as { blockdevices: Record<string, unknown>[] };
    const unmounted = {
      ...tagged(raw),
      lsblk: { blockdevices: lsblk.blockdevices.map(unmount) },
      mounts: (raw.mounts ?? "")
        .split("\n")
        .filter((l) => !l.includes(at))
        .join("\n"),
    };
    expect(JSON.stringify(unmounted)).not.toContain(at);
    const spec = nodeSpec([bySize]);
    expect(planNode(parseNodeInventory(unmounted), spec).hash).toBe(
      planNode(parseNodeInventory(tagged(raw)), spec).hash,
    );
  });

  it("a logical volume of a group that is not ours is still excluded, with the reason", () => {
    const vg = group(
      planNode(parseNodeInventory(raw), nodeSpec([specGroup("vg-new", bySize.deviceSelector)])),
      "vg-new",
    );
    expect(mapperLvs(vg).find((e) => e.path === "/dev/mapper/vgpl-pool0")?.reasons).toContain(
      "/dev/mapper/vgpl-pool0 is an LVM logical volume; volume groups are not built on logical volumes",
    );
  });

  it("one of ours named explicitly is still excluded, with the reason (never silently dropped)", () => {
    const named = specGroup("vgpl", {
      deviceSelectorTerms: [
        {
          matchExpressions: [
            { key: "kname", operator: "In", values: ["/dev/vda", "/dev/vdb", "/dev/mapper/vgpl-pool0"] },
          ],
        },
      ],
    });
    const vg = group(planNode(parseNodeInventory(tagged(raw)), nodeSpec([named])), "vgpl");
    expect(mapperLvs(vg).map((e) => e.path)).toEqual(["/dev/mapper/vgpl-pool0"]);
  });
});
