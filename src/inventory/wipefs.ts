import { z } from "zod";
import { compareNatural } from "./device-path";
import type { Signature } from "./types";
import { arrayUnder, compact, optionalText, parseRaw } from "./raw-shape";

/**
 * Signatures found by `wipefs --json --no-act [--output DEVICE,OFFSET,TYPE,UUID,LABEL,LENGTH,USAGE] <dev>`.
 *
 * wipefs (util-linux 2.38) prints `{"signatures": [{"device": "loop3", "offset": "0x438", "type": "ext4",
 * "uuid": "...", "label": null}]}`: the device is the kernel name without /dev/, the offset a hex string,
 * uuid and label null when absent; "length" and "usage" ("partition-table", "raid", "filesystem",
 * "other") only with --output. For a blank device it prints an empty array — or, without --json, nothing.
 * Without `-a` wipefs only lists; this module never builds a command that erases.
 */

/** The exact wipefs argv that lists the signatures of one device (never with -a). */
export function wipefsArgv(device: string): string[] {
  return ["wipefs", "--json", "--no-act", "--output", "DEVICE,OFFSET,TYPE,UUID,LABEL,LENGTH,USAGE", device];
}

/** The "signatures" entries of one wipefs --json stdout; empty output means no signatures. */
export function wipefsEntries(stdout: string): unknown[] {
  if (stdout.trim() === "") return [];
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch (err) {
    throw new Error(`wipefs printed something that is not JSON: ${(err as Error).message}`);
  }
  return [...arrayUnder(json, "signatures", '{"signatures": [...]}')];
}

/**
 * Signatures by device as wipefs printed it ("loop3", or a path), each list sorted by offset.
 * Throws a RawShapeError on bad entries.
 */
export function parseWipefsSignatures(entries: readonly unknown[]): Map<string, Signature[]> {
  const byDevice = new Map<string, Signature[]>();
  entries.forEach((entry, i) => {
    const e = parseRaw(rawEntry, entry, "a wipefs signature object", [i]);
    const device = e.device;
    const signature: Signature = compact({
      type: e.type,
      offset: e.offset,
      uuid: e.uuid,
      label: e.label,
      usage: e.usage,
    });
    byDevice.set(device, [...(byDevice.get(device) ?? []), signature]);
  });
  for (const list of byDevice.values()) list.sort(compareSignatures);
  return byDevice;
}

/** By offset (numerically), then type: the order does not depend on the order wipefs printed them in. */
export function compareSignatures(a: Signature, b: Signature): number {
  const oa = offsetValue(a.offset);
  const ob = offsetValue(b.offset);
  if (oa !== ob) return oa < ob ? -1 : 1;
  return compareNatural(a.type, b.type) || compareNatural(a.uuid ?? "", b.uuid ?? "");
}

const rawEntry = z.object({
  device: z.string().min(1),
  type: z.string().min(1),
  offset: z
    .union([
      z.string().regex(/^(0x[0-9a-fA-F]+|\d+)$/, 'must be an offset like "0x218"'),
      z.number().int().nonnegative(),
    ])
    .optional()
    .transform((v) => (typeof v === "number" ? `0x${v.toString(16)}` : v)),
  uuid: optionalText,
  label: optionalText,
  usage: optionalText,
});

/** Offsets without one sort last. */
function offsetValue(offset: string | undefined): bigint {
  return offset === undefined ? 1n << 64n : BigInt(offset);
}
