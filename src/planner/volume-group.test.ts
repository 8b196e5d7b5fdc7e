import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseNodeInventory } from "../inventory/parse";
import { estimatedPvExtents } from "./volume-group";

test("new PV extents match what lvm2 made on the recorded fixtures (1MiB data offset, 4MiB extents)", () => {
  const raw = JSON.parse(readFileSync(join(__dirname, "../../examples/sample-inventory.json"), "utf8")) as {
    nodes: unknown[];
  };
  const checked: Array<[number, number]> = [];
  for (const node of raw.nodes) {
    const inv = parseNodeInventory(node as Parameters<typeof parseNodeInventory>[0]);
    for (const pv of inv.pvs) {
      const vg = inv.vgs.find((v) => v.name === pv.vgName);
      const device = inv.devices.find((d) => d.path === pv.device || d.kname === pv.device);
      if (!vg || !device) continue;
      checked.push([estimatedPvExtents(device.size, vg.extentSize), pv.size / vg.extentSize]);
    }
  }
  expect(checked.length).toBeGreaterThan(2);
  for (const [estimate, actual] of checked) expect(estimate).toBe(actual);
});
