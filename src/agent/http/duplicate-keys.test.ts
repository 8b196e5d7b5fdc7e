import { duplicateKeyPath } from "./duplicate-keys";

test.each([
  ['{"a":1,"a":2}', "a"],
  ['{"spec":{"volumeGroups":[{"name":"x"},{"name":"y","name":"z"}]}}', "spec.volumeGroups[1].name"],
  ['{"a":{"b":1},"c":[1,{"d":2,"\\u0064":3}]}', "c[1].d"],
  ['{"a":"\\"a\\"","b":{"a":1},"a\\\\":2}', undefined],
  ['[{"x":1},{"x":2}]', undefined],
  ['{"k":"{\\"k\\":1,\\"k\\":2}"}', undefined],
])("%s → %s", (text, path) => {
  JSON.parse(text);
  expect(duplicateKeyPath(text)).toBe(path);
});
