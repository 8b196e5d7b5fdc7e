import { canonicalJson } from "./hash";
import { deviceClaim, step, thinPoolPlan, volumeGroupPlan } from "./plan-objects";

test("every builder writes its keys in sorted order, so the plan's JSON is already canonical", () => {
  const objects = [
    step("pvmove", ["pvmove", "/dev/sdb", "/dev/sdc"], "why", {
      volumeGroup: "vg1",
      device: "/dev/sdb",
      deviceId: "a",
      devices: ["/dev/sdc"],
      deviceIds: ["b"],
      destructive: true,
      file: { path: "/x", content: "y" },
    }),
    deviceClaim({
      kname: "/dev/sdb",
      path: "/dev/sdb",
      id: "a",
      size: 1,
      member: false,
      wipe: ["xfs"],
      renamedFrom: "/dev/sdc",
      adopted: true,
    }),
    thinPoolPlan({
      name: "p",
      deviceClass: "d",
      exists: true,
      extents: 1,
      targetExtents: 2,
      targetPercent: "90%VG",
    }),
    volumeGroupPlan({
      name: "vg1",
      claimed: [],
      excluded: [{ kname: "/dev/x", path: "/dev/y", reasons: ["r"] }],
      exists: true,
      wildcard: false,
      leaving: [],
      thinPools: [],
    }),
  ];
  for (const o of objects) expect(JSON.stringify(o)).toBe(canonicalJson(o));
});

test("absent fields stay absent", () => {
  expect(step("vgremove", ["vgremove", "vg1"], "why")).toEqual({
    argv: ["vgremove", "vg1"],
    op: "vgremove",
    reason: "why",
  });
  expect(Object.keys(deviceClaim({ kname: "k", id: "i", size: 1, member: true }))).toEqual([
    "id",
    "kname",
    "member",
    "size",
  ]);
});
