import type { LVMNodeStatus } from "../../api";
import { statusEvents } from "./events";
import { lvmNodeStatus } from "./status";
import type { LVMNodeObject } from "../types";

// The ThinPoolNearlyFull condition (from the agent's reported thin pool usage and the spec's
// capacity thresholds) and its Events, on transitions only.

const T0 = Date.parse("2044-10-22T16:29:24Z");
const T1 = T0 + 60_000;

type Pools = ReadonlyArray<readonly [string, string, string]>;
const agent = (pools: Pools): LVMNodeStatus => ({
  state: "Ready",
  volumeGroups: [
    {
      name: "vg1",
      state: "Healthy",
      volumes: pools.map(([name, dataPercent, metadataPercent]) => ({
        name,
        attributes: "twi-aotz--",
        dataPercent,
        metadataPercent,
      })),
    },
  ],
  conditions: [],
});
const node = (status?: LVMNodeStatus, capacity?: object): LVMNodeObject =>
  ({
    metadata: { name: "n1", namespace: "storage", generation: 1 },
    spec: { volumeGroups: [], ...(capacity ? { capacity } : {}) },
    ...(status ? { status } : {}),
  }) as unknown as LVMNodeObject;
const synced = (status: LVMNodeStatus) => ({
  kind: "synced" as const,
  pod: "lvm-system/a",
  applied: 0,
  status,
});
const nearlyFull = (s: LVMNodeStatus) => s.conditions?.find((c) => c.type === "ThinPoolNearlyFull");

test.each([
  ["all below the default 75%", [["pool0", "12.00", "3.00"]], undefined, "False", "BelowWarning"],
  ["data at the default warning (75%)", [["pool0", "75.00", "3.00"]], undefined, "True", "AboveWarning"],
  [
    "metadata above the default critical (85%)",
    [["pool0", "10.00", "90.10"]],
    undefined,
    "True",
    "AboveCritical",
  ],
  [
    "thresholds from the spec",
    [["pool0", "55.00", "3.00"]],
    { warningPercent: 50, criticalPercent: 60 },
    "True",
    "AboveWarning",
  ],
  [
    "the worst pool decides",
    [
      ["a", "80.00", "1.00"],
      ["b", "96.00", "1.00"],
    ],
    undefined,
    "True",
    "AboveCritical",
  ],
] as const)("%s", (_name, pools, capacity, status, reason) => {
  const s = lvmNodeStatus(node(undefined, capacity), synced(agent(pools)), T0);
  expect(nearlyFull(s)).toMatchObject({ status, reason, observedGeneration: 1 });
});

test("the message names each pool over the warning with its data and metadata percent", () => {
  const s = lvmNodeStatus(
    node(),
    synced(
      agent([
        ["a", "80.00", "1.00"],
        ["b", "12.00", "86.50"],
        ["c", "1.00", "1.00"],
      ]),
    ),
    T0,
  );
  expect(nearlyFull(s)!.message).toBe(
    "vg1/a data 80.00% metadata 1.00% (warning); vg1/b data 12.00% metadata 86.50% (critical); thresholds 75% and 85%",
  );
});

test("no thin pool reported: no condition", () => {
  const s = lvmNodeStatus(node(), synced(agent([])), T0);
  expect(nearlyFull(s)).toBeUndefined();
});

test("Ready ignores it: a nearly full pool is a warning, not a node that is down", () => {
  const s = lvmNodeStatus(node(), synced(agent([["pool0", "99.00", "3.00"]])), T0);
  expect(s.conditions?.find((c) => c.type === "Ready")).toMatchObject({ status: "True" });
});

describe("Events on transitions only", () => {
  const step = (before: LVMNodeStatus | undefined, pools: Pools, t: number) => {
    const after = lvmNodeStatus(node(before), synced(agent(pools)), t);
    return { after, events: statusEvents(before, after).filter((e) => e.reason.startsWith("ThinPool")) };
  };

  test("below → warning → warning (usage moved) → critical → below", () => {
    const first = step(undefined, [["pool0", "10.00", "1.00"]], T0);
    expect(first.events).toEqual([]);
    const warn = step(first.after, [["pool0", "76.00", "1.00"]], T1);
    expect(warn.events).toEqual([
      {
        type: "Warning",
        reason: "ThinPoolNearlyFull",
        action: "Monitor",
        note: "vg1/pool0 data 76.00% metadata 1.00% (warning); thresholds 75% and 85%",
      },
    ]);
    const moved = step(warn.after, [["pool0", "77.00", "1.00"]], T1 + 1);
    expect(moved.events).toEqual([]);
    const critical = step(moved.after, [["pool0", "90.00", "1.00"]], T1 + 2);
    expect(critical.events.map((e) => [e.type, e.reason])).toEqual([["Warning", "ThinPoolCriticallyFull"]]);
    const freed = step(critical.after, [["pool0", "20.00", "1.00"]], T1 + 3);
    expect(freed.events.map((e) => [e.type, e.reason, e.note])).toEqual([
      ["Normal", "ThinPoolSpaceRecovered", "every thin pool is below 75% data and metadata"],
    ]);
  });
});
