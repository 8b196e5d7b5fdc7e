import type { DeviceClaim, NodePlan, PlanDocument } from "../../planner";
import { planMap } from "./plan-map";

const GiB = 1024 ** 3;
const claim = (kname: string, size: number, extra: Partial<DeviceClaim> = {}): DeviceClaim => ({
  kname,
  id: `kname:${kname}`,
  size,
  member: false,
  ...extra,
});
const node = (name: string, extra: Partial<NodePlan>): NodePlan => ({
  node: name,
  selected: true,
  volumeGroups: [],
  actions: [],
  blocked: [],
  lvmd: { "device-classes": [] },
  hash: "0".repeat(64),
  ...extra,
});
const DOC: PlanDocument = {
  apiVersion: "pulumi-lvm.dev/plan/v1",
  nodeSet: "fast",
  nodes: [
    node("n1", {
      volumeGroups: [
        {
          name: "vg-a",
          exists: true,
          claimed: [
            claim("/dev/sdb", 4 * GiB, { member: true }),
            claim("/dev/sdc", 4 * GiB, { wipeSignatures: [{ type: "ext4", offset: "0x438" }] }),
          ],
          leaving: [claim("/dev/sdd", 8 * GiB, { member: true })],
          excluded: [{ kname: "/dev/sde", reasons: ["/dev/sde is mounted at /mnt"] }],
          thinPools: [
            { name: "pool0", deviceClass: "thin", exists: true, extents: 100, targetPercent: "90%VG" },
          ],
        },
        {
          name: "vg-b",
          claimed: [claim("/dev/sde", 2 * GiB)],
          excluded: [],
        },
      ],
      actions: [
        {
          op: "wipefs",
          argv: ["wipefs", "--all", "/dev/sdc"],
          reason: "erase ext4 on /dev/sdc",
          destructive: true,
        },
        { op: "vgextend", argv: ["vgextend", "vg-a", "/dev/sdc"], reason: "add /dev/sdc to vg-a" },
      ],
      blocked: [
        { volumeGroup: "vg-a", device: "/dev/sdd", reason: "moving /dev/sdd needs 8Gi free" },
        { volumeGroup: "vg-c", reason: "vg-c has no usable devices on this node" },
      ],
    }),
    node("n2", { selected: false }),
    node("n3", {}),
  ],
};

const map = planMap(DOC);
const n1 = map.nodes[0]!;
const cellOf = (device: string) => n1.cells.find((c) => c.device === device);

test("the title names the node set, the summary is the plan's own line", () => {
  expect(map.title).toBe("pulumi-lvm plan: LVMNodeSet fast");
  expect(map.source).toBe("plan");
  expect(map.summary).toEqual(["3 nodes, 2 selected: 1 with actions, 1 with blocked steps, 1 converged"]);
});

test.each([
  ["/dev/sdb", "claimed", "4Gi", ["vg-a: a member (kname:/dev/sdb)"]],
  ["/dev/sdc", "joining", "4Gi", ["vg-a: joins; wipes ext4 at 0x438: DESTRUCTIVE (kname:/dev/sdc)"]],
  [
    "/dev/sdd",
    "blocked",
    "8Gi",
    [
      "vg-a: leaves: the selector no longer picks it; moved off and removed (kname:/dev/sdd)",
      "vg-a: moving /dev/sdd needs 8Gi free",
    ],
  ],
  // Excluded by vg-a, claimed by vg-b: the claim wins, both reasons stay.
  [
    "/dev/sde",
    "joining",
    "2Gi",
    ["vg-a: /dev/sde is mounted at /mnt", "vg-b: joins (new group) (kname:/dev/sde)"],
  ],
])("%s is %s (%s) with its reasons", (device, state, size, reasons) => {
  expect(cellOf(device)).toEqual({ device, state, size, reasons });
});

test("each device once, whatever the number of groups that name it", () => {
  expect(n1.cells.map((c) => c.device)).toEqual(["/dev/sdb", "/dev/sdc", "/dev/sdd", "/dev/sde"]);
});

test("the node's state, steps (destructive marked) and notes", () => {
  expect(map.nodes.map((n) => n.state)).toEqual(["blocked", "not-selected", "converged"]);
  expect(n1.nodeSet).toBe("fast");
  expect(n1.steps).toEqual([
    { command: "wipefs --all /dev/sdc", reason: "erase ext4 on /dev/sdc", destructive: true },
    { command: "vgextend vg-a /dev/sdc", reason: "add /dev/sdc to vg-a", destructive: false },
  ]);
  expect(n1.notes).toEqual(["blocked: vg-c has no usable devices on this node"]);
  expect(map.nodes[1]!.notes).toEqual(["not selected by the node set's nodeSelector"]);
});

test("a group's bar: members, joining and leaving as parts of all its devices; a pool's target", () => {
  expect(n1.bars).toEqual([
    {
      name: "vg-a",
      kind: "volume-group",
      text: "now 12Gi, 8Gi after the plan",
      parts: [
        { kind: "claimed", fraction: 0.25, text: "members 4Gi" },
        { kind: "joining", fraction: 0.25, text: "joining 4Gi" },
        { kind: "leaving", fraction: 0.5, text: "leaving 8Gi" },
      ],
    },
    {
      name: "vg-a/pool0",
      kind: "thin-pool",
      text: "device class thin: 100 extents, grown to 90%VG",
      parts: [{ kind: "target", fraction: 0.9, text: "90%VG after the plan" }],
    },
    {
      name: "vg-b",
      kind: "volume-group",
      text: "new, 2Gi after the plan",
      parts: [{ kind: "joining", fraction: 1, text: "joining 2Gi" }],
    },
  ]);
});
