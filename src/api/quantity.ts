import { z } from "zod";

/**
 * Kubernetes resource quantities ("30Gi", "1.5T", "500M", "1e9") parsed to an exact whole number of
 * bytes, with the grammar and suffixes of k8s.io/apimachinery `resource.Quantity`.
 *
 * Unlike Kubernetes, which silently rounds a fractional value up, a quantity that does not come to a
 * whole number of bytes ("0.5", "100m", "1.0000001Ki") is rejected: a size that silently changes is
 * worse than an error. Negative sizes and sizes beyond Number.MAX_SAFE_INTEGER (8 PiB) are rejected too.
 */

/** The pattern Kubernetes publishes for quantities (used in the CRD's openAPIV3Schema). */
export const QUANTITY_PATTERN =
  "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";

const GRAMMAR =
  /^([+-]?)(?:(\d+)(?:\.(\d*))?|\.(\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei)|([numkMGTPE])|[eE]([+-]?(?:\d+(?:\.\d*)?|\.\d+)))?$/;

const BINARY: Record<string, bigint> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};
const DECIMAL_EXPONENT: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

export type QuantityResult = { ok: true; bytes: number } | { ok: false; message: string };

/** Parses a quantity to exact bytes; never throws. */
export function parseQuantity(text: string): QuantityResult {
  const m = GRAMMAR.exec(text);
  if (!m)
    return {
      ok: false,
      message: `must be a Kubernetes quantity such as "30Gi", "1.5T" or "500M" (got "${text}")`,
    };
  const [, sign, whole = "", frac1, frac2, binary, decimal, exponent] = m;
  const fraction = frac1 ?? frac2 ?? "";
  let numerator = BigInt((whole || "0") + fraction);
  let denominator = 10n ** BigInt(fraction.length);
  if (binary) numerator *= BINARY[binary]!;
  let power = 0;
  if (decimal) power = DECIMAL_EXPONENT[decimal]!;
  if (exponent !== undefined) {
    if (!/^[+-]?\d+$/.test(exponent))
      return { ok: false, message: `must use a whole-number exponent (got "${text}")` };
    power = Number(exponent);
    if (Math.abs(power) > 30) return { ok: false, message: `exponent out of range (got "${text}")` };
  }
  if (power > 0) numerator *= 10n ** BigInt(power);
  if (power < 0) denominator *= 10n ** BigInt(-power);
  if (sign === "-" && numerator !== 0n) return { ok: false, message: `must not be negative (got "${text}")` };
  if (numerator % denominator !== 0n)
    return { ok: false, message: `must be a whole number of bytes (got "${text}")` };
  const bytes = numerator / denominator;
  if (bytes > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, message: `is too large (got "${text}")` };
  return { ok: true, bytes: Number(bytes) };
}

/** Parses a quantity to exact bytes or throws an Error carrying the message. */
export function quantityToBytes(text: string): number {
  const r = parseQuantity(text);
  if (!r.ok) throw new Error(r.message);
  return r.bytes;
}

const IEC = ["Ei", "Pi", "Ti", "Gi", "Mi", "Ki"] as const;

/** Formats bytes as the shortest exact binary quantity ("30Gi", "1536Mi", "512"). Inverse of parseQuantity. */
export function formatBytes(bytes: number): string {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new Error(`formatBytes: not a byte count: ${bytes}`);
  if (bytes === 0) return "0";
  for (const suffix of IEC) {
    const unit = Number(BINARY[suffix]!);
    if (bytes % unit === 0) return `${bytes / unit}${suffix}`;
  }
  return String(bytes);
}

/** zod schema for a byte quantity string; the CRD gets Kubernetes' own pattern. */
export function quantity(description: string) {
  return z
    .string({
      error: (i) =>
        i.code === "invalid_type"
          ? `must be a quantity string such as "30Gi" (got ${JSON.stringify(i.input)})`
          : undefined,
    })
    .max(64)
    .superRefine((value, ctx) => {
      const r = parseQuantity(value);
      if (!r.ok) ctx.addIssue({ code: "custom", message: r.message });
    })
    .meta({ description, pattern: QUANTITY_PATTERN });
}
