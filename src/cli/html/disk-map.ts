/**
 * The fleet's disks as one picture (`plan --html`, `status --html`): per node each device with its
 * fate and why, each volume group's and thin pool's size as bars, and the steps planned. Both
 * commands build this from what they already have (plan-map.ts, status-map.ts); page.ts draws it.
 */
export interface DiskMap {
  /** What the page is of, e.g. "pulumi-lvm plan: LVMNodeSet fast". */
  readonly title: string;
  /** Which command made it: the plan has sizes and targets, the status has usage. */
  readonly source: "plan" | "status";
  /** Lines that say what the whole page holds (counts, sets), shown above the grid. */
  readonly summary: readonly string[];
  readonly nodes: readonly MapNode[];
}

/**
 * A device's fate, strongest first: `blocked` (a step the planner will not take on it), `leaving` (a
 * member the selector no longer picks), `joining` (claimed, added by the plan or waiting in it),
 * `claimed` (already a member), `excluded` (not used, with why).
 */
export const DISK_STATES = ["blocked", "leaving", "joining", "claimed", "excluded"] as const;
export type DiskState = (typeof DISK_STATES)[number];

export interface MapNode {
  readonly name: string;
  /** The node set that selected it, when known. */
  readonly nodeSet?: string;
  /** A word for the whole node: plan "planned", "converged", "blocked", "not-selected"; status its state. */
  readonly state: string;
  readonly cells: readonly MapCell[];
  readonly bars: readonly MapBar[];
  /** The commands in order (the plan's actions; the steps of a plan waiting for approval). */
  readonly steps: readonly MapStep[];
  /** What else to know about the node: blocked steps on no device, conditions that need a look. */
  readonly notes: readonly string[];
}

export interface MapCell {
  /** The device as lvm names it, e.g. "/dev/sdb". */
  readonly device: string;
  readonly state: DiskState;
  /** Its size for people ("3.5Ti"), when known. */
  readonly size?: string;
  /** Why, one sentence each, naming the volume group: "vg-hdd: joins", "vg-data: /dev/sdb is mounted at /mnt". */
  readonly reasons: readonly string[];
}

/** A volume group or thin pool as a bar: its parts as fractions of the whole, and the numbers. */
export interface MapBar {
  /** "vg-data" or "vg-data/pool0". */
  readonly name: string;
  readonly kind: "volume-group" | "thin-pool";
  /** The numbers in words: "30Gi, 28Gi used (93%)", "now 1.7Ti, 5.2Ti after the plan". */
  readonly text: string;
  readonly parts: readonly MapBarPart[];
}

export interface MapBarPart {
  /** used: allocated now; claimed, joining, leaving: devices by fate; target: a pool after the plan. */
  readonly kind: "used" | "target" | "claimed" | "joining" | "leaving";
  /** Of the bar's whole, 0..1. */
  readonly fraction: number;
  readonly text: string;
}

export interface MapStep {
  /** The command as a shell would take it. */
  readonly command: string;
  /** One sentence: why this step. */
  readonly reason: string;
  /** The step destroys data that exists now (a wipe, a forced removal). */
  readonly destructive: boolean;
}

/**
 * Puts the entries for one device together (a device can be excluded by one group and claimed by
 * another): the strongest state wins, every reason is kept, the first size known is kept.
 */
export function mergeCells(cells: readonly MapCell[]): MapCell[] {
  const byDevice = new Map<string, MapCell>();
  for (const c of cells) {
    const seen = byDevice.get(c.device);
    if (!seen) {
      byDevice.set(c.device, c);
      continue;
    }
    const state = DISK_STATES.indexOf(c.state) < DISK_STATES.indexOf(seen.state) ? c.state : seen.state;
    const size = seen.size ?? c.size;
    byDevice.set(c.device, {
      device: c.device,
      state,
      ...(size !== undefined ? { size } : {}),
      reasons: [...seen.reasons, ...c.reasons],
    });
  }
  return [...byDevice.values()];
}

/** `part` of `whole` as a fraction in 0..1 (0 when the whole is unknown or empty). */
export function fraction(part: number, whole: number): number {
  if (!(whole > 0) || !(part > 0)) return 0;
  return Math.min(1, part / whole);
}
