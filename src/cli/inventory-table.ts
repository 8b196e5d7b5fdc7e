import type { BlockDevice, NodeInventory } from "../inventory/types";
import { sortNatural } from "../planner/node-index";
import { formatSize } from "../planner/units";
import { columns } from "./output";

/**
 * `inventory -o text`: the node's devices as a table (DEVICE, TYPE, SIZE, IN USE), then its volume
 * groups (NAME, SIZE, FREE, PVS, TAGS), for people; `-o wide` adds SERIAL, WWN, MODEL and the
 * /dev/disk/by-id links, the names to select a disk by on real nodes. IN USE is what the planner
 * looks at before it takes a disk: a physical volume, signatures, mounts, devices on top of it.
 */
export function formatInventoryTable(node: NodeInventory, wide: boolean): string {
  const devices = sortNatural(node.devices, (d) => d.kname);
  const header = ["DEVICE", "TYPE", "SIZE", "IN USE", ...(wide ? ["SERIAL", "WWN", "MODEL", "BY-ID"] : [])];
  const rows = devices.map((d) => [
    d.path,
    d.type,
    formatSize(d.size),
    inUse(d, node) || "-",
    ...(wide
      ? [
          d.serial ?? "-",
          d.wwn ?? "-",
          d.model ?? "-",
          d.symlinks.filter((s) => s.startsWith("/dev/disk/by-id/")).join(",") || "-",
        ]
      : []),
  ]);
  const out = [`node ${node.node}\n`, columns(header, rows)];
  if (node.vgs.length) {
    const vgRows = sortNatural(node.vgs, (v) => v.name).map((vg) => [
      vg.name,
      formatSize(vg.size),
      formatSize(vg.free),
      node.pvs
        .filter((p) => p.vgName === vg.name)
        .map((p) => p.device)
        .join(",") || "-",
      vg.tags.join(",") || "-",
    ]);
    out.push("\n", columns(["VOLUME GROUP", "SIZE", "FREE", "PVS", "TAGS"], vgRows));
  }
  if (node.missingDevices?.length) out.push(`\nnot found: ${node.missingDevices.join(", ")}\n`);
  return out.join("");
}

function inUse(d: BlockDevice, node: NodeInventory): string {
  const pv = node.pvs.find((p) => p.device === d.kname || p.device === d.path);
  return [
    ...(pv ? [pv.vgName ? `PV of ${pv.vgName}` : "PV in no VG"] : []),
    ...new Set(d.signatures.filter((s) => !(pv && s.type === "LVM2_member")).map((s) => s.type)),
    ...d.mountpoints.map((m) => `mounted at ${m}`),
    ...(d.children.length ? [`${d.children.join(",")} on it`] : []),
    ...(d.readOnly ? ["read-only"] : []),
    ...(d.probeError ? [`could not be probed: ${d.probeError}`] : []),
  ].join(", ");
}
