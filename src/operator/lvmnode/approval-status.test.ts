import type { LVMNodeStatus } from "../../api";
import type { WaitingPlan } from "../agents/pending";
import { lvmNodeStatus } from "./status";
import { statusEvents } from "./events";
import type { LVMNodeObject } from "../types";

const T0 = Date.parse("2044-10-22T16:29:24Z");
const AGENT: LVMNodeStatus = { state: "Ready", conditions: [] };
const node = (status?: LVMNodeStatus): LVMNodeObject =>
  ({
    metadata: { name: "n1", namespace: "storage", generation: 2 },
    spec: {},
    ...(status ? { status } : {}),
  }) as LVMNodeObject;

const waiting = (hash: string): WaitingPlan => ({
  node: "n1",
  hash,
  policy: "Destructive",
  held: 1,
  claims: ["vg1: /dev/loop9 (kname:/dev/loop9)"],
  steps: [
    {
      op: "wipefs",
      command: "wipefs --all /dev/loop9",
      device: "/dev/loop9",
      erases: [{ type: "xfs", uuid: "0b5c-uuid" }],
      why: "erases the signatures on the device",
    },
  ],
});
const cond = (s: LVMNodeStatus, type: string) => s.conditions?.find((c) => c.type === type);

test("a waiting plan: in status with its hash and since when; Ready False with reason AwaitingApproval; one Warning event", () => {
  const s = lvmNodeStatus(node(), { kind: "awaiting", pod: "p", waiting: waiting("h1"), status: AGENT }, T0);
  expect(s.pendingApproval).toMatchObject({
    hash: "h1",
    since: "2044-10-22T16:29:24Z",
    steps: [{ erases: [{ uuid: "0b5c-uuid" }] }],
  });
  expect(cond(s, "AwaitingApproval")).toMatchObject({ status: "True", reason: "ApprovalRequired" });
  expect(cond(s, "Ready")).toMatchObject({ status: "False", reason: "AwaitingApproval" });
  expect(cond(s, "Reconciled")!.message).toContain("pulumi-lvm approve --node n1 --hash h1");
  expect(statusEvents(undefined, s).filter((e) => e.reason === "AwaitingApproval")).toHaveLength(1);

  // A resync an hour later with the same plan: the very same status, so no write and no event.
  const again = lvmNodeStatus(
    node(s),
    { kind: "awaiting", pod: "p", waiting: waiting("h1"), status: AGENT },
    T0 + 3_600_000,
  );
  expect(again).toEqual(s);
  expect(statusEvents(s, again)).toEqual([]);
});

test("a stale approval is refused naming the plan that waits now", () => {
  const s = lvmNodeStatus(
    node(),
    { kind: "awaiting", pod: "p", waiting: waiting("h2"), stale: "h1", status: AGENT },
    T0,
  );
  expect(cond(s, "AwaitingApproval")).toMatchObject({ reason: "StaleApproval" });
  expect(cond(s, "AwaitingApproval")!.message).toMatch(
    /lvm\.topolvm\.io\/approve=h1 is refused.*the plan now is h2/,
  );
});

test("approved and applied: the plan goes, the approval is recorded, AwaitingApproval turns False", () => {
  const before = lvmNodeStatus(
    node(),
    { kind: "awaiting", pod: "p", waiting: waiting("h1"), status: AGENT },
    T0,
  );
  const s = lvmNodeStatus(
    node(before),
    { kind: "synced", pod: "p", applied: 2, approved: "h1", status: AGENT },
    T0 + 1000,
  );
  expect(s.pendingApproval).toBeUndefined();
  expect(s.lastApproval).toEqual({ hash: "h1", at: "2044-10-22T16:29:25Z" });
  expect(cond(s, "AwaitingApproval")).toMatchObject({ status: "False", reason: "Approved" });
  expect(cond(s, "Ready")).toMatchObject({ status: "True" });
});

test("no plan ever waited: no AwaitingApproval condition is added (nothing to write on existing nodes)", () => {
  const s = lvmNodeStatus(node(), { kind: "synced", pod: "p", applied: 0, status: AGENT }, T0);
  expect(cond(s, "AwaitingApproval")).toBeUndefined();
  expect(s.pendingApproval).toBeUndefined();
});

test("the agent unavailable: the waiting plan stays shown", () => {
  const before = lvmNodeStatus(
    node(),
    { kind: "awaiting", pod: "p", waiting: waiting("h1"), status: AGENT },
    T0,
  );
  const s = lvmNodeStatus(node(before), { kind: "unavailable", message: "no pod" }, T0 + 1000);
  expect(s.pendingApproval?.hash).toBe("h1");
});
