import { rfc3339, setCondition } from "./conditions";

const T0 = Date.parse("2044-10-22T16:29:24.512Z");
const T1 = T0 + 60_000;

describe("setCondition", () => {
  test("a new condition gets now as its transition time, in whole seconds", () => {
    const out = setCondition(
      undefined,
      { type: "LVMNodesReady", status: "False", reason: "LVMNodesNotReady" },
      T0,
    );
    expect(out).toEqual([
      {
        type: "LVMNodesReady",
        status: "False",
        reason: "LVMNodesNotReady",
        lastTransitionTime: "2044-10-22T16:29:24Z",
      },
    ]);
  });

  test("same status: the transition time stays, reason and message follow", () => {
    const before = setCondition(
      undefined,
      { type: "LVMNodesReady", status: "False", reason: "A", message: "a" },
      T0,
    );
    const after = setCondition(
      before,
      { type: "LVMNodesReady", status: "False", reason: "B", message: "b", observedGeneration: 2 },
      T1,
    );
    expect(after[0]).toEqual({
      type: "LVMNodesReady",
      status: "False",
      reason: "B",
      message: "b",
      observedGeneration: 2,
      lastTransitionTime: rfc3339(T0),
    });
  });

  test("a status change moves the transition time; other types stay in place", () => {
    const other = {
      type: "ProviderReady",
      status: "True" as const,
      lastTransitionTime: "2044-01-01T00:00:00Z",
    };
    const before = setCondition([other], { type: "LVMNodesReady", status: "False" }, T0);
    const after = setCondition(before, { type: "LVMNodesReady", status: "True" }, T1);
    expect(after).toEqual([
      other,
      { type: "LVMNodesReady", status: "True", lastTransitionTime: rfc3339(T1) },
    ]);
  });
});
