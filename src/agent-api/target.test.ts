import { formatTarget, parseTarget, targetMismatch } from "./target";

describe("X-Pulumi-Lvm-Target", () => {
  test("round trip: a node, an LVMNode", () => {
    expect(parseTarget(formatTarget({ node: "n1" }))).toEqual({ node: "n1" });
    expect(parseTarget(formatTarget({ node: "n1", namespace: "storage" }))).toEqual({
      node: "n1",
      namespace: "storage",
    });
    expect(parseTarget(undefined)).toBeUndefined();
  });

  test.each([["a/b/c"], ["/n1"], ["N1"], ["n1/"], [""]])("malformed %j: an error", (value) => {
    expect(parseTarget(value)).toHaveProperty("error");
  });

  test("repeated: an error", () => {
    expect(parseTarget(["n1", "n2"])).toHaveProperty("error");
  });

  test("the agent of n2 refuses a call for n1; one serving storage refuses tenant-b/n2", () => {
    expect(targetMismatch({ node: "n1" }, "n2", "storage")).toBe(
      "this is the agent of node n2; the call is for node n1: refused, nothing was done",
    );
    expect(targetMismatch({ node: "n2", namespace: "tenant-b" }, "n2", "storage")).toBe(
      "this agent serves the LVMNodes of namespace storage; the call is for LVMNode tenant-b/n2: refused, nothing was done",
    );
    expect(targetMismatch({ node: "n2", namespace: "storage" }, "n2", "storage")).toBeUndefined();
    expect(targetMismatch({ node: "n2", namespace: "tenant-b" }, "n2", "")).toBeUndefined();
    expect(targetMismatch({ node: "n2" }, "n2", "storage")).toBeUndefined();
  });
});
