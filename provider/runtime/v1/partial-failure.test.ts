import { applyOutputs, PartialApplyError, type ApplyResult } from "./partial-failure";
import type { NodeOutcome } from "./state";

const seal = (props: Record<string, unknown>) => ({ ...props, sealed: true });
const props = { nodeSetName: "edge", namespace: "lvm", __provider: "PROVIDER TEXT" };
const outcome = (over: Partial<NodeOutcome> = {}): NodeOutcome => ({
  selected: true,
  planHash: "h",
  stepsDone: 3,
  stepsSkipped: 0,
  blocked: [],
  ...over,
});
const failure = (node: string, before?: NodeOutcome) => ({
  message: `node ${node}: PlanChanged: changed`,
  outcome: before ?? outcome({ planHash: "", stepsDone: 0 }),
});

test("no failure: the sealed props with every node's outcome, sorted", () => {
  const result: ApplyResult = { outcomes: { b: outcome(), a: outcome() }, failures: {}, changed: ["a", "b"] };
  const outs = applyOutputs("lvm/edge", props, result, seal);
  expect(outs).toEqual({ ...props, nodes: { a: outcome(), b: outcome() }, sealed: true });
  expect(Object.keys(outs.nodes as object)).toEqual(["a", "b"]);
});

test("a node failed while another changed: PartialApplyError with every outcome, the error, __provider and a reason per failed node", () => {
  const result: ApplyResult = {
    outcomes: { a: outcome({ operation: "op-1" }) },
    failures: { c: failure("c"), b: failure("b", outcome({ planHash: "old", operation: "op-0" })) },
    changed: ["a"],
  };
  const error = (() => {
    try {
      applyOutputs("lvm/edge", props, result, seal);
    } catch (e) {
      return e;
    }
  })() as PartialApplyError;
  expect(error).toBeInstanceOf(PartialApplyError);
  expect(error.message).toBe(
    "applying node set lvm/edge failed:\nnode b: PlanChanged: changed\nnode c: PlanChanged: changed\napplied: a",
  );
  expect(error.id).toBe("lvm/edge");
  expect(error.reasons).toEqual(["node b: PlanChanged: changed", "node c: PlanChanged: changed"]);
  expect(error.properties).toEqual({
    ...props,
    sealed: true,
    nodes: {
      a: outcome({ operation: "op-1" }),
      // On update: the outcome it had before, with the error.
      b: outcome({ planHash: "old", operation: "op-0", error: "node b: PlanChanged: changed" }),
      c: outcome({ planHash: "", stepsDone: 0, error: "node c: PlanChanged: changed" }),
    },
  });
  expect(error.properties.__provider).toBe("PROVIDER TEXT");
});

test("failures where nothing changed on any node: a plain Error (the engine keeps what it had)", () => {
  const result: ApplyResult = {
    outcomes: { a: outcome({ stepsDone: 0 }) },
    failures: { b: failure("b") },
    changed: [],
  };
  let error: unknown;
  try {
    applyOutputs("lvm/edge", props, result, seal);
  } catch (e) {
    error = e;
  }
  expect(error).not.toBeInstanceOf(PartialApplyError);
  expect((error as Error).message).toBe(
    "applying node set lvm/edge failed:\nnode b: PlanChanged: changed\napplied: a",
  );
});
