import type { DevicesFile } from "../inventory/devices-file";
import type { NodeInventory } from "../inventory/types";
import { planNode } from "./plan-node";
import { applyPlanEffects } from "./simulate";
import { planTeardown } from "./teardown";
import { disk, inventory, knameGroup, nodeSpec } from "../../test/support/planner/testing";
import type { NodePlan } from "./types";

/**
 * lvm's devices file in the plan: on (use_devicesfile=1 and the file exists) every device of a group
 * we keep is listed (--adddev after pvcreate), every device whose label goes is unlisted first
 * (--deldev before pvremove); off, or on without the file (lvm then uses every device), no step.
 */
// A thick class: nothing is allocated, so a member can leave without pvmove.
const thick = [{ name: "fast", strategy: "Thick" as const, volumeGroup: "vg1", default: true }];
const spec = nodeSpec([knameGroup("vg1", ["sdb", "sdc"])], thick);
const lines = (plan: NodePlan) =>
  plan.actions.filter((a) => a.op !== "write-lvmd-config").map((a) => a.argv.join(" "));
const withFile = (inv: NodeInventory, file: DevicesFile | undefined): NodeInventory => {
  const { devicesFile: _drop, ...rest } = inv;
  return file ? { ...rest, devicesFile: file } : rest;
};
const file = (o: Partial<DevicesFile> = {}): DevicesFile => ({
  enabled: true,
  name: "system.devices",
  exists: true,
  entries: [],
  ...o,
});
const fresh = inventory([disk("sda", { mountpoints: ["/"] }), disk("sdb"), disk("sdc")]);

describe.each([
  ["on", file(), true],
  ["off (use_devicesfile=0)", file({ enabled: false, exists: false }), false],
  ["on without the file (lvm uses every device)", file({ exists: false }), false],
  ["not read (an inventory without it)", undefined, false],
])("devices file %s", (_name, devicesFile, inUse) => {
  const start = withFile(fresh, devicesFile);
  const create = planNode(start, spec);
  const built = applyPlanEffects(start, create);

  test("create: --adddev right after the pvcreates, before vgcreate", () => {
    expect(lines(create).slice(0, 5)).toEqual(
      inUse
        ? [
            "pvcreate /dev/sdb",
            "pvcreate /dev/sdc",
            "lvm lvmdevices --adddev /dev/sdb",
            "lvm lvmdevices --adddev /dev/sdc",
            "vgcreate --addtag pulumi-lvm vg1 /dev/sdb /dev/sdc",
          ]
        : [
            "pvcreate /dev/sdb",
            "pvcreate /dev/sdc",
            "vgcreate --addtag pulumi-lvm vg1 /dev/sdb /dev/sdc",
            "pvchange --addtag pulumi-lvm.kname=sdb /dev/sdb",
            "pvchange --addtag pulumi-lvm.kname=sdc /dev/sdc",
          ],
    );
    for (const a of create.actions.filter((x) => x.op === "lvmdevices-adddev"))
      expect(a).toMatchObject({ volumeGroup: "vg1", deviceId: `kname:${a.device}` });
  });

  test("the built node is converged: no step the second time", () => {
    expect(lines(planNode(built, spec))).toEqual([]);
    if (inUse) expect(built.devicesFile!.entries.map((e) => e.devname)).toEqual(["/dev/sdb", "/dev/sdc"]);
  });

  test("teardown: --deldev before each pvremove, and the file ends as it began", () => {
    const down = planTeardown(built, spec, { force: false });
    const pvSteps = lines(down).filter((l) => /pvremove|lvmdevices/.test(l));
    expect(pvSteps).toEqual(
      inUse
        ? [
            "lvm lvmdevices --deldev /dev/sdb",
            "lvm lvmdevices --deldev /dev/sdc",
            "pvremove /dev/sdb",
            "pvremove /dev/sdc",
          ]
        : ["pvremove /dev/sdb", "pvremove /dev/sdc"],
    );
    expect(lines(down).indexOf(pvSteps[0]!)).toBeGreaterThan(lines(down).indexOf("vgremove vg1"));
    expect(applyPlanEffects(built, down).devicesFile).toEqual(devicesFile);
  });

  test("a member missing from the file is listed again; a member leaving the selector is unlisted first", () => {
    const unlisted = withFile(built, inUse ? { ...built.devicesFile!, entries: [] } : devicesFile);
    expect(lines(planNode(unlisted, spec))).toEqual(
      inUse ? ["lvm lvmdevices --adddev /dev/sdb", "lvm lvmdevices --adddev /dev/sdc"] : [],
    );
    const shrink = planNode(built, nodeSpec([knameGroup("vg1", ["sdb"])], thick));
    expect(lines(shrink)).toEqual(
      inUse
        ? ["vgreduce vg1 /dev/sdc", "lvm lvmdevices --deldev /dev/sdc", "pvremove /dev/sdc"]
        : ["vgreduce vg1 /dev/sdc", "pvremove /dev/sdc"],
    );
  });
});

test("a group we do not own gets no devices-file step, listed or not", () => {
  const foreign = planNode(
    withFile(
      inventory([disk("sdb"), disk("sdc")], {
        pvs: [{ device: "/dev/sdb", uuid: "u-b", vgName: "vg1", size: 1, free: 1, tags: [] }],
        vgs: [
          {
            name: "vg1",
            uuid: "v",
            size: 1,
            free: 1,
            extentSize: 4 << 20,
            extentCount: 1,
            freeExtentCount: 1,
            tags: [],
          },
        ],
      }),
      file(),
    ),
    spec,
  );
  expect(foreign.actions.filter((a) => a.op.startsWith("lvmdevices"))).toEqual([]);
});

test("a teardown's deldev of a device the file does not list is left out; a step repeated is refused by lvm and taken as done by the agent", () => {
  const start = withFile(fresh, file());
  const built = applyPlanEffects(start, planNode(start, spec));
  const half = withFile(built, { ...built.devicesFile!, entries: built.devicesFile!.entries.slice(0, 1) });
  expect(lines(planTeardown(half, spec, { force: false })).filter((l) => l.includes("lvmdevices"))).toEqual([
    "lvm lvmdevices --deldev /dev/sdb",
  ]);
});
