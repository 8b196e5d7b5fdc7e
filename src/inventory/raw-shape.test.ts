import { z } from "zod";
import {
  arrayUnder,
  compact,
  optionalFlag,
  optionalPercent,
  optionalText,
  parseRaw,
  wholeNumber,
} from "./raw-shape";

describe("column schemas", () => {
  it.each<[unknown, number]>([
    [2147483648, 2147483648],
    ["2147483648", 2147483648],
    [" 4194304 ", 4194304],
    ["8388608B", 8388608],
    [0, 0],
  ])("wholeNumber reads %j", (input, n) => {
    expect(wholeNumber.parse(input)).toBe(n);
  });

  it.each<unknown>(["2G", "1.5", -1, 1.5, "", null, 2 ** 60])("wholeNumber rejects %j", (input) => {
    expect(wholeNumber.safeParse(input).success).toBe(false);
  });

  it.each<[unknown, number | undefined]>([
    ["11.04", 11.04],
    ["0.00", 0],
    [12.5, 12.5],
    ["", undefined],
    [null, undefined],
    [undefined, undefined],
  ])("optionalPercent reads %j", (input, n) => {
    expect(optionalPercent.parse(input)).toBe(n);
  });

  it.each<[unknown, boolean | undefined]>([
    [true, true],
    [false, false],
    [1, true],
    ["0", false],
    [null, undefined],
  ])("optionalFlag reads %j", (input, flag) => {
    expect(optionalFlag.parse(input)).toBe(flag);
  });

  it.each<[unknown, string | undefined]>([
    ["  QEMU HARDDISK   ", "QEMU HARDDISK"],
    ["   ", undefined],
    [null, undefined],
  ])("optionalText reads %j", (input, text) => {
    expect(optionalText.parse(input)).toBe(text);
  });
});

describe("parseRaw", () => {
  const schema = z.object({
    name: z.string(),
    size: wholeNumber,
    children: z.array(z.object({ name: z.string() })).optional(),
  });

  it("names the whole value when it is of the wrong kind", () => {
    expect(() => parseRaw(schema, "sda", "a device object")).toThrow(/^expected a device object$/);
  });

  it("names the first wrong field with its path, after the prefix", () => {
    expect(() =>
      parseRaw(schema, { name: "sda", size: 1, children: [{ name: 3 }] }, "", ["blockdevices", 2]),
    ).toThrow("blockdevices[2].children[0].name: must be a string (got 3)");
    expect(() => parseRaw(schema, { size: 1 }, "")).toThrow("name: is required");
    expect(() => parseRaw(schema, { name: "sda", size: { bytes: 1 } }, "")).toThrow(
      "size: has the wrong type (got an object)",
    );
  });
});

describe("helpers", () => {
  it("arrayUnder returns the array or says what was expected", () => {
    expect(arrayUnder({ signatures: [1] }, "signatures", "x")).toEqual([1]);
    expect(() => arrayUnder({ signatures: {} }, "signatures", '{"signatures": [...]}')).toThrow(
      'expected {"signatures": [...]}',
    );
  });

  it("compact drops undefined but keeps false, 0, empty strings and null", () => {
    expect(compact({ a: undefined, b: false, c: 0, d: "", e: null })).toEqual({
      b: false,
      c: 0,
      d: "",
      e: null,
    });
    expect(Object.keys(compact({ a: undefined }))).toEqual([]);
  });
});
