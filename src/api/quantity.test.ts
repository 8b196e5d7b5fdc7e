import fc from "fast-check";
import { formatBytes, parseQuantity, QUANTITY_PATTERN, quantity, quantityToBytes } from "./quantity";

const Ki = 1024;
const Mi = Ki * Ki;
const Gi = Mi * Ki;
const Pi = Gi * Mi;

describe("parseQuantity", () => {
  test.each([
    ["30Gi", 30 * Gi],
    ["1.5T", 1_500_000_000_000],
    ["500M", 500_000_000],
    ["1e3", 1000],
    ["1E3", 1000],
    ["1.5Gi", 1.5 * Gi],
    ["0", 0],
    ["-0", 0],
    ["+1Ki", Ki],
    [".5Ki", 512],
    ["5.", 5],
    ["1000m", 1],
    ["2000000000n", 2],
    ["1k", 1000],
    ["1.5e3", 1500],
    ["1e+3", 1000],
    ["200e-2", 2],
    ["7Pi", 7 * Pi],
    ["9007199254740991", Number.MAX_SAFE_INTEGER],
  ])("%s is %d bytes", (text, bytes) => {
    expect(parseQuantity(text)).toEqual({ ok: true, bytes });
  });

  test.each([
    ["0.5", 'must be a whole number of bytes (got "0.5")'],
    ["100m", 'must be a whole number of bytes (got "100m")'],
    ["1.0000001Ki", 'must be a whole number of bytes (got "1.0000001Ki")'],
    ["1e-3", 'must be a whole number of bytes (got "1e-3")'],
    ["-1Gi", 'must not be negative (got "-1Gi")'],
    ["-1", 'must not be negative (got "-1")'],
    // Exactness above 2^53 would need bigint byte counts; 1Ei (2^60) is rejected by design.
    ["1Ei", 'is too large (got "1Ei")'],
    ["16Ei", 'is too large (got "16Ei")'],
    ["8Pi", 'is too large (got "8Pi")'],
    ["9007199254740992", 'is too large (got "9007199254740992")'],
    ["1e1.5", 'must use a whole-number exponent (got "1e1.5")'],
    ["1e31", 'exponent out of range (got "1e31")'],
    ["", 'must be a Kubernetes quantity such as "30Gi", "1.5T" or "500M" (got "")'],
    ["garbage", 'must be a Kubernetes quantity such as "30Gi", "1.5T" or "500M" (got "garbage")'],
    ["1 Gi", 'must be a Kubernetes quantity such as "30Gi", "1.5T" or "500M" (got "1 Gi")'],
    ["1gi", 'must be a Kubernetes quantity such as "30Gi", "1.5T" or "500M" (got "1gi")'],
    ["1GiB", 'must be a Kubernetes quantity such as "30Gi", "1.5T" or "500M" (got "1GiB")'],
    ["1GB", 'must be a Kubernetes quantity such as "30Gi", "1.5T" or "500M" (got "1GB")'],
    ["0x10", 'must be a Kubernetes quantity such as "30Gi", "1.5T" or "500M" (got "0x10")'],
    ["Gi", 'must be a Kubernetes quantity such as "30Gi", "1.5T" or "500M" (got "Gi")'],
    ["1e", 'must be a Kubernetes quantity such as "30Gi", "1.5T" or "500M" (got "1e")'],
    [" 1", 'must be a Kubernetes quantity such as "30Gi", "1.5T" or "500M" (got " 1")'],
    ["١", 'must be a Kubernetes quantity such as "30Gi", "1.5T" or "500M" (got "١")'],
  ])("%j is rejected", (text, message) => {
    expect(parseQuantity(text)).toEqual({ ok: false, message });
  });

  test("never throws, and what it accepts is a byte count Kubernetes' pattern accepts too", () => {
    const k8s = new RegExp(QUANTITY_PATTERN);
    const quantityLike = fc
      .tuple(
        fc.constantFrom("", "+", "-"),
        fc.stringMatching(/^[0-9]{0,25}$/),
        fc.constantFrom("", ".", ".5", ".0001", ".25"),
        fc.constantFrom(
          "",
          "Ki",
          "Mi",
          "Gi",
          "Ti",
          "Pi",
          "Ei",
          "n",
          "u",
          "m",
          "k",
          "M",
          "G",
          "T",
          "P",
          "E",
          "e3",
          "e-2",
          "E+40",
          "e1.5",
          "B",
          "i",
        ),
      )
      .map((parts) => parts.join(""));
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: "binary" }), quantityLike), (text) => {
        const r = parseQuantity(text);
        if (r.ok) {
          expect(Number.isSafeInteger(r.bytes) && r.bytes >= 0).toBe(true);
          expect(k8s.test(text)).toBe(true);
        } else {
          expect(r.message).toContain(`(got "${text}")`);
        }
      }),
      { numRuns: 2000 },
    );
  });

  test("any integer n with a decimal suffix or exponent k is exactly n·10^k bytes", () => {
    const suffixes = [
      ["k", 3],
      ["M", 6],
      ["G", 9],
      ["T", 12],
      ["P", 15],
    ] as const;
    const cases = fc.oneof(
      fc
        .tuple(fc.bigInt({ min: 0n, max: 10n ** 16n }), fc.constantFrom(...suffixes))
        .map(([n, [suffix, k]]) => ({
          text: `${n}${suffix}`,
          exact: n * 10n ** BigInt(k),
        })),
      fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 16n }), fc.integer({ min: 0, max: 16 })).map(([n, k]) => ({
        text: `${n}e${k}`,
        exact: n * 10n ** BigInt(k),
      })),
    );
    fc.assert(
      fc.property(cases, ({ text, exact }) => {
        const r = parseQuantity(text);
        if (exact <= BigInt(Number.MAX_SAFE_INTEGER)) expect(r).toEqual({ ok: true, bytes: Number(exact) });
        else expect(r).toEqual({ ok: false, message: `is too large (got "${text}")` });
      }),
      { numRuns: 2000 },
    );
  });
});

describe("formatBytes", () => {
  test.each([
    [0, "0"],
    [512, "512"],
    [Ki, "1Ki"],
    [1536 * Mi, "1536Mi"],
    [30 * Gi, "30Gi"],
    [7 * Pi, "7Pi"],
    [1_500_000_000_000, "1464843750Ki"],
    [1_000_000_000_001, "1000000000001"],
    [Number.MAX_SAFE_INTEGER, "9007199254740991"],
  ])("%d is %s", (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });

  test.each([-1, 1.5, Number.MAX_SAFE_INTEGER + 1, NaN, Infinity])("%d is not a byte count", (bytes) => {
    expect(() => formatBytes(bytes)).toThrow(`formatBytes: not a byte count: ${bytes}`);
  });

  test("parseQuantity(formatBytes(n)) is n for every safe integer", () => {
    const bytes = fc.oneof(
      fc.maxSafeNat(),
      fc
        .tuple(fc.nat({ max: 2 ** 20 }), fc.constantFrom(Ki, Mi, Gi, Gi * Ki, Pi))
        .map(([n, unit]) => Math.min(n * unit, Number.MAX_SAFE_INTEGER)),
    );
    fc.assert(
      fc.property(bytes, (n) => {
        expect(parseQuantity(formatBytes(n))).toEqual({ ok: true, bytes: n });
      }),
      { numRuns: 5000 },
    );
  });
});

describe("quantityToBytes", () => {
  test("returns bytes or throws the message", () => {
    expect(quantityToBytes("1Mi")).toBe(Mi);
    expect(() => quantityToBytes("1.5")).toThrow('must be a whole number of bytes (got "1.5")');
  });
});

describe("the zod quantity schema", () => {
  const schema = quantity("a size");

  test("accepts a quantity and leaves the text as it was", () => {
    expect(schema.parse("1.5Gi")).toBe("1.5Gi");
  });

  test.each([
    ["0.5", ['must be a whole number of bytes (got "0.5")']],
    [30, ['must be a quantity string such as "30Gi" (got 30)']],
    [
      "9".repeat(65),
      ["Too big: expected string to have <=64 characters", `is too large (got "${"9".repeat(65)}")`],
    ],
  ])("rejects %j", (input, messages) => {
    const r = schema.safeParse(input);
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.message)).toEqual(messages);
  });
});
