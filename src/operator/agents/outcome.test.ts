import { decide, describeBlocked } from "./outcome";

const step = { op: "vgcreate", argv: ["vgcreate", "vg1", "/dev/sdb"] } as never;

test.each([
  ["no steps, nothing blocked", [], [], "converged"],
  ["steps, nothing blocked", [step], [], "apply"],
  ["steps and a blocked device", [step], [{ reason: "in use" }], "blocked"],
  ["only a blocked device", [], [{ reason: "in use" }], "blocked"],
] as const)("%s -> %s", (_what, actions, blocked, expected) => {
  expect(decide({ actions: [...actions], blocked: [...blocked] })).toBe(expected);
});

test("blocked items name the volume group and device when known", () => {
  expect(
    describeBlocked([
      { volumeGroup: "vg1", device: "/dev/sdc", reason: "has an xfs signature" },
      { reason: "no device matches" },
    ]),
  ).toEqual(["vg1: /dev/sdc: has an xfs signature", "no device matches"]);
});
