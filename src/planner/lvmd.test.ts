import YAML from "yaml";
import { lvmdConfigFor, lvmdWriteAction, renderLvmdYaml } from "./lvmd";
import { knameGroup, nodeSpec } from "../../test/support/planner/testing";

const spec = {
  ...nodeSpec(
    [knameGroup("vg1", ["sdb"]), knameGroup("vg2", ["sdc"])],
    [
      {
        name: "thin",
        strategy: "Thin",
        volumeGroup: "vg1",
        default: true,
        thin: { poolName: "pool0", sizePercent: 90, overprovisionRatio: 2.5 },
      },
      { name: "fast", strategy: "Thick", volumeGroup: "vg2" },
    ],
  ),
  lvmd: { socketName: "/run/lvmd/lvmd.sock" },
};

test("lvmd.yaml in TopoLVM's format, byte for byte", () => {
  const config = lvmdConfigFor(spec, () => true);
  expect(renderLvmdYaml(config)).toBe(
    [
      'socket-name: "/run/lvmd/lvmd.sock"',
      "device-classes:",
      '  - name: "thin"',
      '    volume-group: "vg1"',
      "    default: true",
      '    type: "thin"',
      "    spare-gb: 0",
      "    thin-pool:",
      '      name: "pool0"',
      "      overprovision-ratio: 2.5",
      '  - name: "fast"',
      '    volume-group: "vg2"',
      '    type: "thick"',
      "    spare-gb: 0",
      "",
    ].join("\n"),
  );
  expect(YAML.parse(renderLvmdYaml(config))).toEqual(config);
});

test("only device classes that are ready", () => {
  expect(lvmdConfigFor(spec, (dc) => dc.name === "fast")["device-classes"].map((d) => d.name)).toEqual([
    "fast",
  ]);
  expect(renderLvmdYaml(lvmdConfigFor(spec, () => false))).toBe(
    'socket-name: "/run/lvmd/lvmd.sock"\ndevice-classes: []\n',
  );
});

test("written when it differs, when absent, or (not read) alongside other changes", () => {
  const desired = lvmdConfigFor(spec, () => true);
  expect(lvmdWriteAction(desired, { ...desired }, "/x.yaml", true)).toBeUndefined();
  expect(lvmdWriteAction(desired, null, "/x.yaml", false)?.file).toEqual({
    path: "/x.yaml",
    content: renderLvmdYaml(desired),
  });
  expect(lvmdWriteAction(desired, undefined, "/x.yaml", false)).toBeUndefined();
  expect(lvmdWriteAction(desired, undefined, "/x.yaml", true)?.reason).toBe(
    "write /x.yaml with device classes thin, fast for TopoLVM's lvmd",
  );
});
