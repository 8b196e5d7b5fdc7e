/**
 * lvm's 10-character `lv_attr` (lvs(8), "lv_attr bits"), decoded. Examples:
 *   "twi-aotz--" thin pool, writeable, inherited allocation, active, open, thin target, zeroing
 *   "Vwi-a-tz--" thin volume, active, not open
 *   "-wi-a-----" linear, active
 *   "-wi-XX----" linear whose state lvm could not ask the kernel for (no device-mapper)
 *   "Vwi---tz-k" thin volume, inactive, skipped on activation
 * Letters as lvm2 2.03 writes them (lib/metadata/lv.c, lv_attr_dup_with_info_and_seg_status). A letter
 * a later lvm adds decodes as "unknown" rather than failing the inventory.
 */
export interface LvAttr {
  readonly volumeType: LvVolumeType;
  readonly permissions: "writeable" | "read-only" | "read-only-activation" | "none" | "unknown";
  readonly allocation: "anywhere" | "contiguous" | "inherited" | "cling" | "normal" | "none" | "unknown";
  /** Capital allocation letter: locked against allocation changes (e.g. during pvmove). */
  readonly allocationLocked: boolean;
  readonly fixedMinor: boolean;
  readonly state: LvState;
  /** A device-mapper device with a live table exists; undefined when lvm could not tell ("X"). */
  readonly active: boolean | undefined;
  readonly suspended: boolean;
  /** Undefined when lvm could not tell ("X"). */
  readonly open: boolean | undefined;
  /** "unknown-segments" is lvm's own "u": the LV has segments of a type this lvm does not know. */
  readonly targetType:
    "cache" | "mirror" | "raid" | "snapshot" | "thin" | "virtual" | "unknown-segments" | "none" | "unknown";
  /** Newly allocated blocks are zeroed before use. */
  readonly zeroing: boolean;
  readonly health: LvHealth;
  readonly skipActivation: boolean;
}

export type LvVolumeType =
  | "linear"
  | "cache"
  | "mirror"
  | "mirror-not-synced"
  | "origin"
  | "origin-merging"
  | "raid"
  | "raid-not-synced"
  | "snapshot"
  | "snapshot-merging"
  | "pvmove"
  | "virtual"
  | "image"
  | "image-out-of-sync"
  | "mirror-log"
  | "converting"
  | "thin-volume"
  | "thin-pool"
  | "thin-pool-data"
  | "vdo-pool"
  | "vdo-pool-data"
  | "metadata"
  | "unknown";

export type LvState =
  | "active"
  | "inactive"
  | "historical"
  | "suspended"
  | "invalid-snapshot"
  | "invalid-suspended-snapshot"
  | "snapshot-merge-failed"
  | "suspended-snapshot-merge-failed"
  | "mapped-without-table"
  | "mapped-inactive-table"
  | "thin-pool-check-needed"
  | "suspended-thin-pool-check-needed"
  | "unknown";

export type LvHealth =
  | "ok"
  | "partial"
  | "refresh-needed"
  | "mismatches"
  | "writemostly"
  | "reshaping"
  | "remove-after-reshape"
  | "failed"
  | "out-of-data-space"
  | "metadata-read-only"
  | "error"
  | "unknown";

/** Decodes an lv_attr; throws when it is not 10 characters. */
export function parseLvAttr(attr: string): LvAttr {
  if (attr.length !== 10) throw new Error(`lv_attr ${JSON.stringify(attr)}: expected 10 characters`);
  const c = [...attr] as [string, string, string, string, string, string, string, string, string, string];
  const state = STATE[c[4]] ?? "unknown";
  return {
    volumeType: VOLUME_TYPE[c[0]] ?? "unknown",
    permissions: PERMISSIONS[c[1]] ?? "unknown",
    allocation: ALLOCATION[c[2].toLowerCase()] ?? "unknown",
    allocationLocked: c[2] !== c[2].toLowerCase(),
    fixedMinor: c[3] === "m",
    state,
    active: c[4] === "X" ? undefined : "asISmMcC".includes(c[4]),
    suspended: "sSMC".includes(c[4]),
    open: c[5] === "X" ? undefined : c[5] === "o",
    targetType: TARGET[c[6]] ?? "unknown",
    zeroing: c[7] === "z",
    health: HEALTH[c[8]] ?? "unknown",
    skipActivation: c[9] === "k",
  };
}

const VOLUME_TYPE: Record<string, LvVolumeType> = {
  "-": "linear",
  C: "cache",
  m: "mirror",
  M: "mirror-not-synced",
  o: "origin",
  O: "origin-merging",
  r: "raid",
  R: "raid-not-synced",
  s: "snapshot",
  S: "snapshot-merging",
  p: "pvmove",
  v: "virtual",
  i: "image",
  I: "image-out-of-sync",
  l: "mirror-log",
  c: "converting",
  V: "thin-volume",
  t: "thin-pool",
  T: "thin-pool-data",
  d: "vdo-pool",
  D: "vdo-pool-data",
  e: "metadata",
};

const PERMISSIONS: Record<string, LvAttr["permissions"]> = {
  w: "writeable",
  r: "read-only",
  R: "read-only-activation",
  "-": "none",
};

const ALLOCATION: Record<string, LvAttr["allocation"]> = {
  a: "anywhere",
  c: "contiguous",
  i: "inherited",
  l: "cling",
  n: "normal",
  "-": "none",
};

const STATE: Record<string, LvState> = {
  a: "active",
  "-": "inactive",
  h: "historical",
  s: "suspended",
  I: "invalid-snapshot",
  S: "invalid-suspended-snapshot",
  m: "snapshot-merge-failed",
  M: "suspended-snapshot-merge-failed",
  d: "mapped-without-table",
  i: "mapped-inactive-table",
  c: "thin-pool-check-needed",
  C: "suspended-thin-pool-check-needed",
  X: "unknown",
};

const TARGET: Record<string, LvAttr["targetType"]> = {
  C: "cache",
  m: "mirror",
  r: "raid",
  s: "snapshot",
  t: "thin",
  v: "virtual",
  u: "unknown-segments",
  "-": "none",
};

const HEALTH: Record<string, LvHealth> = {
  "-": "ok",
  p: "partial",
  r: "refresh-needed",
  m: "mismatches",
  w: "writemostly",
  s: "reshaping",
  R: "remove-after-reshape",
  F: "failed",
  D: "out-of-data-space",
  M: "metadata-read-only",
  E: "error",
  X: "unknown",
};
