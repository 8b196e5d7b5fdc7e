import { z } from "zod";
import { ValidationError } from "../api";
import { argsProblems, labels, namespaceName, objectName, throwIfInvalid } from "./validate-args";

const schema = z.strictObject({
  ns: namespaceName.optional(),
  name: objectName.optional(),
  labels: labels.optional(),
});

describe("component args validation", () => {
  test("problems carry paths from args, one per offending field or label", () => {
    expect(
      argsProblems(schema, {
        ns: "a.b",
        name: "ok.example",
        labels: { "acme.com/site": "ber-01", "bad key!": "x", team: "-x" },
        extra: 1,
      }),
    ).toEqual([
      {
        path: "args.ns",
        message: `must be a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit (got "a.b")`,
      },
      expect.objectContaining({
        path: "args.labels.bad key!",
        message: expect.stringMatching(/^must be a label key: /),
      }),
      expect.objectContaining({
        path: "args.labels.team",
        message: expect.stringMatching(/^must be a label value: .*\(got "-x"\)$/),
      }),
      { path: "args.extra", message: "unknown field" },
    ]);
  });

  test("valid args have no problems", () => {
    expect(
      argsProblems(schema, {
        ns: "lvm-system",
        name: "node-1.example.com",
        labels: { "app.kubernetes.io/name": "x" },
      }),
    ).toEqual([]);
  });

  test("throwIfInvalid names the component and lists every problem", () => {
    expect(() => throwIfInvalid("NodeSet", "edge", [])).not.toThrow();
    expect(() =>
      throwIfInvalid("NodeSet", "edge", [
        { path: "args.a", message: "is required" },
        { path: "args.b", message: "unknown field" },
      ]),
    ).toThrow(
      new ValidationError('NodeSet "edge"', [
        { path: "args.a", message: "is required" },
        { path: "args.b", message: "unknown field" },
      ]),
    );
    expect(() => throwIfInvalid("NodeSet", "edge", [{ path: "args.a", message: "is required" }])).toThrow(
      /^NodeSet "edge" is invalid:\n {2}args\.a: is required$/,
    );
  });
});
