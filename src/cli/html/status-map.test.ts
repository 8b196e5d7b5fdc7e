import { statusFleet } from "../../../test/support/html/status-fleet";
import { statusView } from "../status-view";
import { statusMap } from "./status-map";

const { sets, nodes } = statusFleet(6);
const map = statusMap(statusView(sets, nodes), nodes);
const byName = (name: string) => map.nodes.find((n) => n.name === name)!;
const cell = (node: string, device: string) => byName(node).cells.find((c) => c.device === device);

test("the title and summary name the sets and count the waiting plans", () => {
  expect(map.title).toBe("pulumi-lvm status: LVMNodeSet lvm-system/edge");
  expect(map.source).toBe("status");
  expect(map.summary).toEqual([
    "LVMNodeSet lvm-system/edge: Ready, 6/6 nodes ready",
    "6 nodes, 1 with a plan waiting for approval",
  ]);
  expect(map.nodes.map((n) => [n.name, n.state, n.nodeSet])).toEqual([
    ["node-000", "Ready", "edge"],
    ["node-001", "Ready", "edge"],
    ["node-002", "Ready", "edge"],
    ["node-003", "Progressing", "edge"],
    ["node-004", "Ready", "edge"],
    ["node-005", "Degraded", "edge"],
  ]);
});

test.each([
  [
    "node-000",
    "/dev/sdb",
    {
      state: "claimed",
      size: "20Gi",
      reasons: ["vg-data: a physical volume of the group (Healthy) (wwn:0x50000b)"],
    },
  ],
  ["node-000", "/dev/sda", { state: "excluded", reasons: ["vg-data: /dev/sda is mounted at /"] }],
  [
    "node-003",
    "/dev/sdd",
    { state: "joining", reasons: ["vg-data: joins in the plan waiting for approval (aaaaaaaaaaaa)"] },
  ],
  [
    "node-005",
    "/dev/sdc",
    {
      state: "blocked",
      size: "20Gi",
      reasons: [
        "blocked: /dev/sdc left the selector of vg-data but stays: moving its extents needs 10Gi free",
        "vg-data: a physical volume of the group (Healthy) (wwn:0x50005c)",
      ],
    },
  ],
  // The blocked message names /dev/sdc only: /dev/sdb of the same node is not blocked.
  ["node-005", "/dev/sdb", { state: "claimed" }],
])("%s %s", (node, device, expected) => {
  expect(cell(node, device)).toMatchObject({ device, ...expected });
});

test("bars: the group's use from size and free, the pool's data use", () => {
  expect(byName("node-002").bars).toEqual([
    {
      name: "vg-data",
      kind: "volume-group",
      text: "Healthy, 40Gi, 34Gi used (85%), 6Gi free",
      parts: [{ kind: "used", fraction: 0.85, text: "used 34Gi" }],
    },
    {
      name: "vg-data/pool0",
      kind: "thin-pool",
      text: "36Gi, data 14.00%, metadata 3.10%",
      parts: [{ kind: "used", fraction: 0.14, text: "data 14.00%" }],
    },
  ]);
});

test("a waiting plan's steps (a wipe is destructive) and notes", () => {
  const n = byName("node-003");
  expect(n.steps).toEqual([
    { command: "wipefs --all /dev/sdd", reason: "erases ext4 on /dev/sdd", destructive: true },
    { command: "vgextend vg-data /dev/sdd", reason: "vgextend on /dev/sdd (vg-data)", destructive: false },
  ]);
  expect(n.notes).toEqual([
    `plan ${"a".repeat(64)} waits for approval (policy Destructive) since 2026-12-07T00:00:00Z`,
  ]);
  expect(byName("node-005").notes).toEqual([
    "Ready False (PlanBlocked)",
    "Reconciled False (PlanBlocked): agent pod agent-x: nothing applied, the plan is blocked: /dev/sdc left the selector of vg-data but stays: moving its extents needs 10Gi free",
  ]);
});
