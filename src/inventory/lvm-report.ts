import { z } from "zod";
import { formatPath } from "../api/errors";
import { compareNatural, devPath } from "./device-path";
import { compact, optionalPercent, optionalText, parseRaw, RawShapeError, wholeNumber } from "./raw-shape";
import type { LogicalVolume, PhysicalVolume, VolumeGroupInfo } from "./types";

export { parseLvAttr } from "./lv-attr";

/**
 * lvm's JSON reports (`--reportformat json --units b --nosuffix`) as PVs, VGs and LVs. Two forms:
 *
 * - `lvm fullreport`: `{"report": [{"vg": [..], "pv": [..], "lv": [..], "pvseg": [..], "seg": [..]}, ...]}`,
 *   one element per VG plus one with an empty "vg" for orphan PVs. Its pv and lv rows carry no vg_name:
 *   the VG is the element's.
 * - separate reports `{"pvs": <pvs json>, "vgs": <vgs json>, "lvs": <lvs json>}`, each
 *   `{"report": [{"pv": [..]}]}`, run with `-o +pv_uuid,pv_tags`, `-o +vg_uuid,vg_extent_size,
 *   vg_extent_count,vg_free_count,vg_tags` and `lvs -a -o +lv_uuid,lv_tags[,lv_metadata_size,chunk_size]`.
 *
 * Thin pools carry `metadataSize` (lv_metadata_size) and `chunkSize` (fullreport: chunk_size of the
 * pool's "thin-pool" seg row; separate reports: an lvs chunk_size column, when asked for).
 *
 * Every value is a string ("2143289344", "0.00", ""); numbers are accepted too. Tags are one
 * comma-separated string. Hidden LVs are named in brackets ("[pool0_tdata]").
 */
export interface LvmReport {
  readonly pvs: PhysicalVolume[];
  readonly vgs: VolumeGroupInfo[];
  readonly lvs: LogicalVolume[];
}

/** The argv of the report discovery runs, optionally restricted to some devices (lvm2 2.03.12+ `--devices`). */
export function fullreportArgv(devices?: readonly string[]): string[] {
  const argv = ["lvm", "fullreport", "--reportformat", "json", "--units", "b", "--nosuffix"];
  return devices ? [...argv, "--devices", devices.join(",")] : argv;
}

/** Parses either form; results are sorted (PVs by device, VGs by name, LVs by VG then name). */
export function parseLvmReport(json: unknown): LvmReport {
  const form = typeof json === "object" && json !== null ? json : {};
  const result = "report" in form ? fromFullreport(json) : "pvs" in form ? fromSeparate(json) : undefined;
  if (!result)
    throw new RawShapeError(
      "",
      `expected {"report": [...]} (lvm fullreport) or {"pvs": ..., "vgs": ..., "lvs": ...}`,
    );
  return {
    pvs: result.pvs.sort((a, b) => compareNatural(a.device, b.device)),
    vgs: result.vgs.sort((a, b) => compareNatural(a.name, b.name)),
    lvs: result.lvs.sort((a, b) => compareNatural(a.vgName, b.vgName) || compareNatural(a.name, b.name)),
  };
}

/** "pulumi-lvm,inv-fixture" → ["pulumi-lvm", "inv-fixture"]; "" → []. */
export function splitTags(tags: string): string[] {
  return tags
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
}

const tags = z.union([z.string(), z.null()]).transform((v) => splitTags(v ?? ""));

const pvRow = z.object({
  pv_name: z.string().min(1),
  pv_uuid: z.string().min(1),
  vg_name: optionalText,
  pv_size: wholeNumber,
  pv_free: wholeNumber,
  pv_tags: tags,
  pv_attr: optionalText,
  pv_missing: optionalText,
});

const vgRow = z.object({
  vg_name: z.string().min(1),
  vg_uuid: z.string().min(1),
  vg_size: wholeNumber,
  vg_free: wholeNumber,
  vg_extent_size: wholeNumber,
  vg_extent_count: wholeNumber,
  vg_free_count: wholeNumber,
  vg_tags: tags,
});

/** A byte count lvm leaves empty ("") where it does not apply, e.g. lv_metadata_size of a linear LV. */
const optionalBytes = z
  .union([z.number(), z.string(), z.null()])
  .optional()
  .transform((v, ctx) => {
    if (v === null || v === undefined || v === "") return undefined;
    const n = typeof v === "number" ? v : /^\d+$/.test(v.trim()) ? Number(v) : NaN;
    if (Number.isSafeInteger(n) && n >= 0) return n;
    ctx.addIssue({ code: "custom", message: `must be a whole number of bytes (got ${JSON.stringify(v)})` });
    return z.NEVER;
  });

/** fullreport "seg" rows: only what the inventory uses (a thin pool's chunk size). */
const segRow = z.object({
  lv_uuid: z.string().min(1),
  segtype: optionalText,
  chunk_size: optionalBytes,
});

const lvRow = z.object({
  lv_name: z.string().min(1),
  vg_name: optionalText,
  lv_uuid: z.string().min(1),
  lv_size: wholeNumber,
  lv_attr: z.string(),
  pool_lv: optionalText,
  data_percent: optionalPercent,
  metadata_percent: optionalPercent,
  lv_metadata_size: optionalBytes,
  chunk_size: optionalBytes,
  lv_tags: tags,
});

const fullreport = z.object({
  report: z.array(
    z.object({
      vg: z.array(z.unknown()).max(1).default([]),
      pv: z.array(z.unknown()).default([]),
      lv: z.array(z.unknown()).default([]),
      seg: z.array(z.unknown()).default([]),
    }),
  ),
});

function fromFullreport(json: unknown): LvmReport {
  const report = parseRaw(fullreport, json, `{"report": [...]}`).report;
  const out: LvmReport = { pvs: [], vgs: [], lvs: [] };
  report.forEach((element, i) => {
    const at = ["report", i];
    const vg =
      element.vg[0] === undefined ? undefined : vgOf(parseRaw(vgRow, element.vg[0], "", [...at, "vg", 0]));
    if (vg) out.vgs.push(vg);
    element.pv.forEach((row, j) =>
      out.pvs.push(pvOf(parseRaw(pvRow, row, "", [...at, "pv", j]), vg?.name ?? "")),
    );
    // A thin pool's chunk size is a property of its segment: seg rows name their LV by uuid.
    const chunks = new Map<string, number>();
    element.seg.forEach((row, j) => {
      const seg = parseRaw(segRow, row, "", [...at, "seg", j]);
      if (seg.segtype === "thin-pool" && seg.chunk_size) chunks.set(seg.lv_uuid, seg.chunk_size);
    });
    element.lv.forEach((row, j) => {
      if (!vg)
        throw new RawShapeError(formatPath([...at, "lv", j]), "a logical volume outside any volume group");
      const lv = parseRaw(lvRow, row, "", [...at, "lv", j]);
      out.lvs.push(lvOf({ ...lv, chunk_size: lv.chunk_size ?? chunks.get(lv.lv_uuid) }, vg.name));
    });
  });
  return out;
}

function fromSeparate(json: unknown): LvmReport {
  const j = json as Record<string, unknown>;
  return {
    pvs: rows(j.pvs, "pvs", "pv").map(([row, at]) => {
      const pv = parseRaw(pvRow, row, "", at);
      return pvOf(pv, pv.vg_name ?? "");
    }),
    vgs: rows(j.vgs, "vgs", "vg").map(([row, at]) => vgOf(parseRaw(vgRow, row, "", at))),
    lvs: rows(j.lvs, "lvs", "lv").map(([row, at]) => {
      const lv = parseRaw(lvRow, row, "", at);
      if (!lv.vg_name) throw new RawShapeError(formatPath([...at, "vg_name"]), "is required");
      return lvOf(lv, lv.vg_name);
    }),
  };
}

const separateReport = z.object({ report: z.array(z.record(z.string(), z.array(z.unknown()))) });

/** The rows of one separate report, each with its path: `{"report": [{"<key>": [rows]}]}`. */
function rows(json: unknown, name: string, key: string): [unknown, PropertyKey[]][] {
  const report = parseRaw(separateReport, json, "", [name]).report;
  if (report.length > 0 && !report.some((r) => key in r)) {
    throw new RawShapeError(
      `${name}.report`,
      `expected {"${key}": [...]} entries (is this the ${name} report?)`,
    );
  }
  return report.flatMap((r, i) =>
    (r[key] ?? []).map((row, k): [unknown, PropertyKey[]] => [row, [name, "report", i, key, k]]),
  );
}

/** lvm's pv_name for a PV whose device it cannot find. */
export const UNKNOWN_PV_NAME = "[unknown]";

function pvOf(row: z.output<typeof pvRow>, vgName: string): PhysicalVolume {
  const missing = row.pv_missing === "missing" || row.pv_attr?.[2] === "m" || row.pv_name === UNKNOWN_PV_NAME;
  return {
    device: row.pv_name === UNKNOWN_PV_NAME ? UNKNOWN_PV_NAME : devPath(row.pv_name),
    uuid: row.pv_uuid,
    vgName,
    size: row.pv_size,
    free: row.pv_free,
    tags: row.pv_tags,
    ...(missing ? { missing: true } : {}),
  };
}

function vgOf(row: z.output<typeof vgRow>): VolumeGroupInfo {
  return {
    name: row.vg_name,
    uuid: row.vg_uuid,
    size: row.vg_size,
    free: row.vg_free,
    extentSize: row.vg_extent_size,
    extentCount: row.vg_extent_count,
    freeExtentCount: row.vg_free_count,
    tags: row.vg_tags,
  };
}

function lvOf(row: z.output<typeof lvRow>, vgName: string): LogicalVolume {
  const hidden = /^\[.*\]$/.test(row.lv_name);
  const thinPool = row.lv_attr.startsWith("t");
  return compact({
    name: unbracket(row.lv_name),
    vgName,
    uuid: row.lv_uuid,
    size: row.lv_size,
    attr: row.lv_attr,
    poolLv: row.pool_lv === undefined ? undefined : unbracket(row.pool_lv),
    dataPercent: row.data_percent,
    metadataPercent: row.metadata_percent,
    ...(thinPool && row.lv_metadata_size ? { metadataSize: row.lv_metadata_size } : {}),
    ...(thinPool && row.chunk_size ? { chunkSize: row.chunk_size } : {}),
    tags: row.lv_tags,
    hidden: hidden || undefined,
  });
}

function unbracket(name: string): string {
  return name.replace(/^\[(.*)\]$/, "$1");
}
