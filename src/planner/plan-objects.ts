import type {
  ActionOp,
  DeviceClaim,
  PlanAction,
  ThinPoolPlan,
  VolumeGroupPlan,
  WipeSignature,
} from "./types";

/**
 * Builders for the objects a plan is made of, each writing its keys in sorted order. The plan's hash
 * is over its canonical JSON (sorted keys, hash.ts); objects already in that order are serialized as
 * they are instead of being copied, which keeps hashing a large fleet fast, and the `--json` output
 * is the canonical text itself.
 */

/** Where a step acts, besides its command. */
export interface StepTarget {
  readonly volumeGroup?: string;
  readonly device?: string;
  readonly deviceId?: string;
  readonly devices?: readonly string[];
  readonly deviceIds?: readonly string[];
  readonly destructive?: boolean;
  readonly signatures?: readonly WipeSignature[];
  readonly file?: { readonly path: string; readonly content: string };
  readonly lostVolumes?: readonly string[];
  readonly missingPvs?: readonly string[];
}

export function step(op: ActionOp, argv: readonly string[], reason: string, t: StepTarget = {}): PlanAction {
  const a: Record<string, unknown> = { argv };
  if (t.destructive) a.destructive = true;
  if (t.device !== undefined) a.device = t.device;
  if (t.deviceId !== undefined) a.deviceId = t.deviceId;
  if (t.deviceIds !== undefined) a.deviceIds = t.deviceIds;
  if (t.devices !== undefined) a.devices = t.devices;
  if (t.file !== undefined) a.file = { content: t.file.content, path: t.file.path };
  if (t.lostVolumes !== undefined) a.lostVolumes = t.lostVolumes;
  if (t.missingPvs !== undefined) a.missingPvs = t.missingPvs;
  a.op = op;
  a.reason = reason;
  if (t.signatures !== undefined) a.signatures = t.signatures.map(wipeSignature);
  if (t.volumeGroup !== undefined) a.volumeGroup = t.volumeGroup;
  return a as unknown as PlanAction;
}

export function deviceClaim(c: DeviceClaim): DeviceClaim {
  const o: Record<string, unknown> = {};
  if (c.adopted) o.adopted = true;
  o.id = c.id;
  o.kname = c.kname;
  o.member = c.member;
  if (c.path !== undefined) o.path = c.path;
  if (c.renamedFrom !== undefined) o.renamedFrom = c.renamedFrom;
  o.size = c.size;
  if (c.wipe !== undefined) o.wipe = c.wipe;
  if (c.wipeSignatures !== undefined) o.wipeSignatures = c.wipeSignatures.map(wipeSignature);
  return o as unknown as DeviceClaim;
}

export function wipeSignature(s: WipeSignature): WipeSignature {
  const o: Record<string, unknown> = {};
  if (s.label !== undefined) o.label = s.label;
  if (s.offset !== undefined) o.offset = s.offset;
  o.type = s.type;
  if (s.uuid !== undefined) o.uuid = s.uuid;
  return o as unknown as WipeSignature;
}

/** "ext4 UUID=… LABEL=precious at 0x438": a signature as a reviewer reads it. */
export function signatureText(s: WipeSignature): string {
  return [
    s.type,
    ...(s.uuid ? [`UUID=${s.uuid}`] : []),
    ...(s.label ? [`LABEL=${JSON.stringify(s.label)}`] : []),
    ...(s.offset ? [`at ${s.offset}`] : []),
  ].join(" ");
}

export function thinPoolPlan(p: ThinPoolPlan): ThinPoolPlan {
  const o: Record<string, unknown> = { deviceClass: p.deviceClass, exists: p.exists };
  if (p.extents !== undefined) o.extents = p.extents;
  o.name = p.name;
  if (p.targetExtents !== undefined) o.targetExtents = p.targetExtents;
  if (p.targetPercent !== undefined) o.targetPercent = p.targetPercent;
  return o as unknown as ThinPoolPlan;
}

export function volumeGroupPlan(g: VolumeGroupPlan): VolumeGroupPlan {
  const o: Record<string, unknown> = {
    claimed: g.claimed,
    excluded: g.excluded.map((e) =>
      e.path !== undefined
        ? { kname: e.kname, path: e.path, reasons: e.reasons }
        : { kname: e.kname, reasons: e.reasons },
    ),
  };
  if (g.exists !== undefined) o.exists = g.exists;
  if (g.leaving !== undefined) o.leaving = g.leaving;
  o.name = g.name;
  if (g.thinPools !== undefined) o.thinPools = g.thinPools;
  if (g.wildcard !== undefined) o.wildcard = g.wildcard;
  return o as unknown as VolumeGroupPlan;
}
