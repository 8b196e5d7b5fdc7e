import { posix } from "node:path";

/**
 * Device names as the tools print them ("loop3", "/dev/loop3", "mapper/vg-lv", "../../sdb") turned into
 * the absolute /dev paths the inventory uses, and the order devices are listed in.
 */

/** "loop3" → "/dev/loop3"; a path is kept (normalised: "/dev//sdb" → "/dev/sdb"). */
export function devPath(name: string): string {
  return name.startsWith("/") ? posix.normalize(name) : `/dev/${name}`;
}

/** The target of a symlink as an absolute path: `linkTarget("/dev/disk/by-id/x", "../../sdb")` → "/dev/sdb". */
export function linkTarget(link: string, target: string): string {
  return posix.resolve(posix.dirname(link), target);
}

/** Orders names with their digit runs compared as numbers: loop2 < loop10, sda2 < sda10 < sdb. */
export function compareNatural(a: string, b: string): number {
  const pa = a.match(DIGITS_OR_NOT) ?? [];
  const pb = b.match(DIGITS_OR_NOT) ?? [];
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i]!;
    const y = pb[i]!;
    if (x === y) continue;
    const numeric = isDigits(x) && isDigits(y);
    if (numeric && x.length !== y.length) return x.length - y.length;
    return x < y ? -1 : 1;
  }
  return pa.length - pb.length;
}

const DIGITS_OR_NOT = /\d+|\D+/g;

function isDigits(s: string): boolean {
  return s.charCodeAt(0) >= 48 && s.charCodeAt(0) <= 57;
}
