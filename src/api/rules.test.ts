import { caseObject, RULE_CASES } from "../../test/api/rule-cases";
import { API_RULES } from "./rules";
import { checkManifest } from "./validate";

describe("every rule of the API has valid and invalid cases", () => {
  test("the case table covers exactly the rules of API_RULES", () => {
    expect(Object.keys(RULE_CASES).sort()).toEqual(API_RULES.map((r) => r.id).sort());
  });

  test.each(API_RULES.map((r) => [r.id]))("%s has at least one invalid case", (id) => {
    const cases = RULE_CASES[id as keyof typeof RULE_CASES];
    expect(cases.some((c) => c.problems.length > 0)).toBe(true);
  });

  test("rule ids are unique", () => {
    const ids = API_RULES.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

const cases = Object.entries(RULE_CASES).flatMap(([id, list]) => list.map((c) => [id, c.name, c] as const));

describe.each(cases)("%s: %s", (_id, _name, c) => {
  test(c.problems.length ? "reports exactly its problems, with paths" : "is valid", () => {
    const { problems } = checkManifest(caseObject(c));
    expect(problems.map((p) => [p.path, p.message])).toEqual(c.problems);
  });

  if (c.problems.length)
    test("says what the API server does with it", () => {
      expect(c.apiServer).toBeDefined();
    });
});
