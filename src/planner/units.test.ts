import { formatSize, lvmSize } from "./units";

test.each([
  [512, "512B"],
  [1024, "1Ki"],
  [512 * 1024 ** 2, "512Mi"],
  [30 * 1024 ** 3, "30Gi"],
  [20000 * 4 * 1024 ** 2, "78.1Gi"],
  [2 * 1024 ** 4, "2Ti"],
])("formatSize(%d) = %s", (bytes, text) => {
  expect(formatSize(bytes)).toBe(text);
});

test.each([
  [8 * 1024 ** 2, "8m"],
  [128 * 1024, "128k"],
  [1024 ** 3, "1g"],
  [92 * 1024 ** 2, "92m"],
  [1536 * 1024, "1536k"],
])("lvmSize(%d) = %s", (bytes, text) => {
  expect(lvmSize(bytes)).toBe(text);
});

test("lvmSize refuses what is not whole KiB", () => {
  expect(() => lvmSize(1000)).toThrow("not a whole number of KiB: 1000");
  expect(() => lvmSize(0)).toThrow();
});
