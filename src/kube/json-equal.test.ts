import * as vm from "node:vm";
import { jsonEqual } from "./json-equal";

test.each([
  [{ a: 1, b: [1, { c: "x" }] }, { b: [1, { c: "x" }], a: 1 }, true],
  [{ a: 1 }, { a: 1, b: undefined }, true],
  [[1, 2], [2, 1], false],
  [{ a: [] }, { a: {} }, false],
  [{ a: null }, { a: null }, true],
  [{ a: null }, {}, false],
  ["1", 1, false],
])("jsonEqual(%j, %j) is %s", (a, b, want) => {
  expect(jsonEqual(a, b)).toBe(want);
});

test("objects from another realm are equal when their JSON is", () => {
  const foreign = vm.runInNewContext('({ spec: { list: [{ name: "vg1" }] } })');
  expect(jsonEqual(foreign, { spec: { list: [{ name: "vg1" }] } })).toBe(true);
});
