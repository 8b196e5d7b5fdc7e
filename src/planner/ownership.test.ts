import { indexNode } from "./node-index";
import { knameTag, ownershipOf, recordedKnameOf } from "./ownership";
import { asMember, disk, inventory, volumeGroup } from "../../test/support/planner/testing";

const ours = volumeGroup("vg1", [
  { device: disk("sdc"), joinedAs: "/dev/sdb" },
  { device: disk("sdd"), joinedAs: null },
]);
const old = volumeGroup("old", [{ device: disk("sde") }]);
const legacy = volumeGroup("legacy", [{ device: disk("sdf") }], { tags: [] });
const inv = inventory(
  ["sdc", "sdd", "sde", "sdf", "sdg"].map((n) => asMember(disk(n))),
  {
    pvs: [
      ...ours.pvs,
      ...old.pvs,
      ...legacy.pvs,
      { device: "/dev/sdg", uuid: "o", vgName: "", size: 1, free: 1, tags: [] },
      { device: "[unknown]", uuid: "gone", vgName: "vg1", size: 1, free: 1, tags: [] },
    ],
    vgs: [ours.vg, old.vg, legacy.vg],
  },
);
const o = ownershipOf(indexNode(inv), ["vg1", "legacy", "vg9"]);

test("our groups are the tagged ones the spec names; a tagged group it does not name is left alone", () => {
  expect(["/dev/sdc", "/dev/sde", "/dev/sdf", "/dev/sdg", "/dev/sdh"].map((k) => o.pvOwner(k))).toEqual([
    { kind: "member", vg: "vg1" },
    { kind: "unmanaged", vg: "old" },
    { kind: "foreign", vg: "legacy" },
    { kind: "orphan" },
    undefined,
  ]);
  expect(o.vgState("legacy").kind).toBe("foreign");
  expect(o.vgState("vg9").kind).toBe("absent");
  const vg1 = o.vgState("vg1");
  if (vg1.kind !== "owned") throw new Error("vg1 should be ours");
  expect(vg1.members.map((m) => [m.device.kname, m.recordedKname])).toEqual([
    ["/dev/sdc", "/dev/sdb"],
    ["/dev/sdd", undefined],
  ]);
  expect(vg1.missing.map((pv) => pv.uuid)).toEqual(["gone"]);
});

test("kernel names members joined under", () => {
  expect([...o.recordedNames].map(([name, devices]) => [name, devices.map((d) => d.kname)])).toEqual([
    ["/dev/sdb", ["/dev/sdc"]],
  ]);
  expect(knameTag("/dev/nvme0n1")).toBe("pulumi-lvm.kname=nvme0n1");
  expect(
    recordedKnameOf({
      device: "/dev/x",
      uuid: "u",
      vgName: "v",
      size: 0,
      free: 0,
      tags: ["other", "pulumi-lvm.kname=sdq"],
    }),
  ).toBe("/dev/sdq");
});
