import { nodeLine, planOverview } from "./plan-overview";
import type { PlanSummary } from "./plan-summary";

function plan(p: Partial<PlanSummary> = {}): PlanSummary {
  return {
    hash: "h",
    selected: true,
    steps: 0,
    claimed: [],
    extended: [],
    removed: [],
    wiped: [],
    excluded: [],
    blocked: [],
    actions: [],
    ...p,
  };
}

describe("nodeLine", () => {
  test.each([
    { name: "converged", p: plan(), line: "0 steps" },
    {
      name: "a new group on two devices",
      p: plan({ steps: 4, claimed: ["/dev/a → vg (new volume group)", "/dev/b → vg (new volume group)"] }),
      line: "4 steps (claims 2)",
    },
    {
      name: "one step, extended, excluded",
      p: plan({ steps: 1, extended: ["/dev/c → vg"], excluded: ["/dev/sda1: mounted", "/dev/sdb: ext4"] }),
      line: "1 step (extends 1), 2 excluded",
    },
    {
      name: "every kind",
      p: plan({
        steps: 7,
        claimed: ["x"],
        extended: ["y"],
        removed: ["z"],
        wiped: ["w", "v"],
        excluded: ["e"],
        blocked: ["vg: /dev/q: in another group"],
      }),
      line: "7 steps (claims 1, extends 1, removes 1, wipes 2), 1 excluded, 1 blocked",
    },
    { name: "blocked only", p: plan({ blocked: ["b"] }), line: "0 steps, 1 blocked" },
  ])("$name → $line", ({ p, line }) => {
    expect(nodeLine(p)).toBe(line);
  });
});

describe("planOverview", () => {
  test.each<{ name: string; plans: Record<string, PlanSummary>; lines: string[] }>([
    { name: "no nodes", plans: {}, lines: [] },
    {
      name: "one node with work",
      plans: { n1: plan({ steps: 2, claimed: ["a"] }) },
      lines: ["n1: 2 steps (claims 1)"],
    },
    {
      name: "work first by node name, then converged and unselected folded",
      plans: {
        "node-10": plan(),
        "node-02": plan({ steps: 3, claimed: ["a", "b"] }),
        "node-01": plan({ selected: false }),
        "node-03": plan(),
        "node-09": plan({ blocked: ["x"] }),
      },
      lines: [
        "node-02: 3 steps (claims 2)",
        "node-09: 0 steps, 1 blocked",
        "2 nodes converged: node-03, node-10",
        "1 node not selected: node-01",
      ],
    },
  ])("$name", ({ plans, lines }) => {
    expect(planOverview(plans)).toEqual(lines);
  });

  test("60 converged nodes are one line; 60 nodes with work are 60 lines", () => {
    const names = Array.from({ length: 60 }, (_, i) => `n${String(i).padStart(2, "0")}`);
    const idle = Object.fromEntries(names.map((n) => [n, plan()]));
    expect(planOverview(idle)).toEqual([`60 nodes converged: ${names.join(", ")}`]);
    const busy = Object.fromEntries(names.map((n) => [n, plan({ steps: 1, extended: ["d"] })]));
    expect(planOverview(busy)).toEqual(names.map((n) => `${n}: 1 step (extends 1)`));
  });
});
