/** Sizes for people (messages) and for lvm (argv). */

const KIB = 1024;
const UNITS = ["Ki", "Mi", "Gi", "Ti", "Pi"] as const;

/** "30Gi" when exact, else "29.8Gi" (one decimal): for messages, never for argv. */
export function formatSize(bytes: number): string {
  if (bytes < KIB) return `${bytes}B`;
  let unit = 0;
  let value = bytes / KIB;
  while (value >= KIB && unit < UNITS.length - 1) {
    value /= KIB;
    unit++;
  }
  const text = Number.isInteger(value) ? String(value) : value.toFixed(1);
  return `${text}${UNITS[unit]}`;
}

/**
 * A byte count as an lvm size argument in the largest exact binary unit: "8m", "256k", "1g".
 * lvm reads lower-case units as powers of 1024. Throws for a size that is not whole KiB.
 */
export function lvmSize(bytes: number): string {
  if (!Number.isSafeInteger(bytes) || bytes <= 0 || bytes % KIB !== 0)
    throw new Error(`lvmSize: not a whole number of KiB: ${bytes}`);
  for (const [unit, factor] of [
    ["g", KIB ** 3],
    ["m", KIB ** 2],
  ] as const)
    if (bytes % factor === 0) return `${bytes / factor}${unit}`;
  return `${bytes / KIB}k`;
}
