import { problemsFrom } from "./errors";
import { deviceSelectorSchema, isWildcardSelector, nodeSelectorSchema } from "./selectors";

/** Problems of a selector as `path: message` lines. */
function problems(schema: typeof deviceSelectorSchema | typeof nodeSelectorSchema, input: unknown): string[] {
  const r = schema.safeParse(input, { reportInput: true });
  return r.success ? [] : problemsFrom(r.error).map((p) => `${p.path}: ${p.message}`);
}

const values = (n: number, make: (i: number) => string) =>
  n < 0 ? undefined : Array.from({ length: n }, (_, i) => make(i));

describe("device selector: how many values each operator takes", () => {
  const device = (operator: string, count: number) => ({
    deviceSelectorTerms: [
      { matchExpressions: [{ key: "size", operator, values: values(count, (i) => `${i + 1}Gi`) }] },
    ],
  });
  const at = "deviceSelectorTerms[0].matchExpressions[0].values";

  // count -1: `values` left out
  test.each([
    ["In", -1, [`${at}: In needs at least one value`]],
    ["In", 0, [`${at}: In needs at least one value`]],
    ["In", 1, []],
    ["In", 2, []],
    ["NotIn", -1, [`${at}: NotIn needs at least one value`]],
    ["NotIn", 0, [`${at}: NotIn needs at least one value`]],
    ["NotIn", 2, []],
    ["Any", -1, []],
    ["Any", 0, []],
    ["Any", 1, [`${at}: Any takes no values (got 1)`]],
    ["Exists", -1, []],
    ["Exists", 0, []],
    ["Exists", 2, [`${at}: Exists takes no values (got 2)`]],
    ["DoesNotExist", -1, []],
    ["DoesNotExist", 1, [`${at}: DoesNotExist takes no values (got 1)`]],
    ["GreaterThan", -1, [`${at}: GreaterThan takes exactly one value (got 0)`]],
    ["GreaterThan", 0, [`${at}: GreaterThan takes exactly one value (got 0)`]],
    ["GreaterThan", 1, []],
    ["GreaterThan", 2, [`${at}: GreaterThan takes exactly one value (got 2)`]],
    ["LessThan", -1, [`${at}: LessThan takes exactly one value (got 0)`]],
    ["LessThan", 1, []],
    ["LessThan", 2, [`${at}: LessThan takes exactly one value (got 2)`]],
  ])("%s with %d values", (operator, count, expected) => {
    expect(problems(deviceSelectorSchema, device(operator, count))).toEqual(expected);
  });

  test("an unknown operator or key names the choices", () => {
    expect(
      problems(deviceSelectorSchema, {
        deviceSelectorTerms: [{ matchExpressions: [{ key: "label", operator: "Matches" }] }],
      }),
    ).toEqual([
      'deviceSelectorTerms[0].matchExpressions[0].key: must be one of "kname", "path", "symlink", "serial", "wwn", "model", "vendor", "size", "rotational", "type", "partlabel" (got "label")',
      'deviceSelectorTerms[0].matchExpressions[0].operator: must be one of "In", "NotIn", "Any", "Exists", "DoesNotExist", "GreaterThan", "LessThan" (got "Matches")',
    ]);
  });

  test("a value longer than 4096 characters and more than 256 values are refused", () => {
    const expr = (vals: string[]) => ({
      deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "In", values: vals }] }],
    });
    expect(problems(deviceSelectorSchema, expr(["x".repeat(4097)]))).toEqual([
      `${at}[0]: must be at most 4096 characters`,
    ]);
    expect(problems(deviceSelectorSchema, expr(Array.from({ length: 257 }, (_, i) => `sd${i}`)))).toEqual([
      `${at}: may have at most 256 items`,
    ]);
  });
});

describe("node selector: how many values each operator takes", () => {
  const node = (operator: string, count: number) => ({
    nodeSelectorTerms: [
      { matchExpressions: [{ key: "cores", operator, values: values(count, (i) => String(i + 1)) }] },
    ],
  });
  const at = "nodeSelectorTerms[0].matchExpressions[0].values";

  test.each([
    ["In", -1, [`${at}: In needs at least one value`]],
    ["In", 0, [`${at}: In needs at least one value`]],
    ["In", 2, []],
    ["NotIn", 0, [`${at}: NotIn needs at least one value`]],
    ["NotIn", 1, []],
    ["Exists", -1, []],
    ["Exists", 1, [`${at}: Exists takes no values (got 1)`]],
    ["DoesNotExist", 0, []],
    ["DoesNotExist", 2, [`${at}: DoesNotExist takes no values (got 2)`]],
    ["Gt", -1, [`${at}: Gt takes exactly one value (got 0)`]],
    ["Gt", 1, []],
    ["Gt", 2, [`${at}: Gt takes exactly one value (got 2)`]],
    ["Lt", 0, [`${at}: Lt takes exactly one value (got 0)`]],
    ["Lt", 1, []],
  ])("%s with %d values", (operator, count, expected) => {
    expect(problems(nodeSelectorSchema, node(operator, count))).toEqual(expected);
  });

  test.each([
    ["3", []],
    // a label value, as the apiserver checks node affinity values, cannot start with '-'
    [
      "-3",
      [
        `${at}[0]: must be a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit (got "-3")`,
      ],
    ],
    ["3.5", [`${at}[0]: Gt needs an integer (got "3.5")`]],
    ["", [`${at}[0]: Gt needs an integer (got "")`]],
  ])("Gt %j", (value, expected) => {
    expect(
      problems(nodeSelectorSchema, {
        nodeSelectorTerms: [{ matchExpressions: [{ key: "cores", operator: "Gt", values: [value] }] }],
      }),
    ).toEqual(expected);
  });

  test("a selector needs a term", () => {
    expect(problems(nodeSelectorSchema, { nodeSelectorTerms: [] })).toEqual([
      "nodeSelectorTerms: needs at least 1 item",
    ]);
    expect(problems(nodeSelectorSchema, {})).toEqual(["nodeSelectorTerms: is required"]);
  });

  test("matchFields and matchExpressions in one term are both checked", () => {
    expect(
      problems(nodeSelectorSchema, {
        nodeSelectorTerms: [
          {
            matchExpressions: [{ key: "zone!", operator: "Exists" }],
            matchFields: [{ key: "spec.unschedulable", operator: "Gt", values: ["1"] }],
          },
        ],
      }),
    ).toEqual([
      `nodeSelectorTerms[0].matchExpressions[0].key: must be a label key: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, optionally after a DNS prefix and '/' (got "zone!")`,
      'nodeSelectorTerms[0].matchFields[0].key: only "metadata.name" is supported (got "spec.unschedulable")',
      'nodeSelectorTerms[0].matchFields[0].operator: matchFields only supports In and NotIn (got "Gt")',
    ]);
  });
});

describe("isWildcardSelector", () => {
  const selector = (...operators: string[][]) => ({
    deviceSelectorTerms: operators.map((ops) => ({
      matchExpressions: ops.map((operator) => ({ key: "kname" as const, operator: operator as "Any" })),
    })),
  });

  test.each([
    [[["Any"]], true],
    [[["In"], ["Exists", "Any"]], true],
    [[["In"], ["Exists"]], false],
  ])("%j: %s", (operators, wildcard) => {
    expect(isWildcardSelector(selector(...operators))).toBe(wildcard);
  });
});
