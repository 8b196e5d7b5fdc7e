import type { NodeSelector } from "../api";
import { matchesNodeSelector } from "./node-selector";

const node = {
  name: "worker-3",
  labels: { "topology.kubernetes.io/zone": "antarctica-east1", disks: "12", tier: "archive" },
};
type Req = NonNullable<NodeSelector["nodeSelectorTerms"][number]["matchExpressions"]>[number];
const sel = (...terms: { matchExpressions?: Req[]; matchFields?: Req[] }[]): NodeSelector => ({
  nodeSelectorTerms: terms,
});

describe("matchesNodeSelector (core/v1 semantics)", () => {
  test.each<[string, Req, boolean]>([
    [
      "In holds",
      {
        key: "topology.kubernetes.io/zone",
        operator: "In",
        values: ["antarctica-east1", "antarctica-west1"],
      },
      true,
    ],
    [
      "In fails on another value",
      { key: "topology.kubernetes.io/zone", operator: "In", values: ["antarctica-west1"] },
      false,
    ],
    ["In fails on a missing label", { key: "gpu", operator: "In", values: ["true"] }, false],
    ["NotIn holds on another value", { key: "tier", operator: "NotIn", values: ["hot"] }, true],
    ["NotIn fails on a listed value", { key: "tier", operator: "NotIn", values: ["archive"] }, false],
    ["NotIn holds on a missing label", { key: "gpu", operator: "NotIn", values: ["true"] }, true],
    ["Exists", { key: "tier", operator: "Exists" }, true],
    ["Exists fails on a missing label", { key: "gpu", operator: "Exists" }, false],
    ["DoesNotExist", { key: "gpu", operator: "DoesNotExist" }, true],
    ["DoesNotExist fails on a present label", { key: "tier", operator: "DoesNotExist" }, false],
    ["Gt", { key: "disks", operator: "Gt", values: ["8"] }, true],
    ["Gt is strict", { key: "disks", operator: "Gt", values: ["12"] }, false],
    ["Lt", { key: "disks", operator: "Lt", values: ["13"] }, true],
    ["Gt on a non-integer label fails", { key: "tier", operator: "Gt", values: ["1"] }, false],
    ["Lt on a missing label fails", { key: "gpu", operator: "Lt", values: ["1"] }, false],
  ])("%s", (_name, requirement, expected) => {
    expect(matchesNodeSelector(sel({ matchExpressions: [requirement] }), node)).toBe(expected);
  });

  test("matchFields compare metadata.name", () => {
    expect(
      matchesNodeSelector(
        sel({ matchFields: [{ key: "metadata.name", operator: "In", values: ["worker-3"] }] }),
        node,
      ),
    ).toBe(true);
    expect(
      matchesNodeSelector(
        sel({ matchFields: [{ key: "metadata.name", operator: "NotIn", values: ["worker-3"] }] }),
        node,
      ),
    ).toBe(false);
  });

  test("expressions and fields of a term are ANDed; terms ORed", () => {
    const zone: Req = { key: "topology.kubernetes.io/zone", operator: "In", values: ["antarctica-east1"] };
    const other: Req = { key: "metadata.name", operator: "In", values: ["worker-9"] };
    expect(matchesNodeSelector(sel({ matchExpressions: [zone], matchFields: [other] }), node)).toBe(false);
    expect(matchesNodeSelector(sel({ matchFields: [other] }, { matchExpressions: [zone] }), node)).toBe(true);
  });

  test("no selector selects every node", () => {
    expect(matchesNodeSelector(undefined, { name: "x", labels: {} })).toBe(true);
  });
});
