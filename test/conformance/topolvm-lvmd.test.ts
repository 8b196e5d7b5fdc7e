/**
 * Fast tests of topolvm-lvmd.ts, the stand-in for TopoLVM's lvmd config validation that the
 * conformance suites check the agent's lvmd.yaml with: it must accept what lvmd accepts and name what
 * lvmd refuses, or those checks prove nothing.
 */
import YAML from "yaml";
import { lvmdConfigFor, renderLvmdYaml } from "../../src/planner/lvmd";
import { topolvmLvmdProblems } from "./topolvm-lvmd";

const thin = {
  name: "thin",
  "volume-group": "vg1",
  default: true,
  type: "thin",
  "spare-gb": 0,
  "thin-pool": { name: "pool0", "overprovision-ratio": 10 },
};
const thick = { name: "fast", "volume-group": "vg2", type: "thick", "spare-gb": 0 };
const config = (...classes: unknown[]) => ({
  "socket-name": "/run/topolvm/lvmd.sock",
  "device-classes": classes,
});

describe("topolvmLvmdProblems (TopoLVM's ValidateDeviceClasses and DeviceClass keys)", () => {
  test("accepts a thin and a thick class, and TopoLVM's own example (no type: thick)", () => {
    expect(topolvmLvmdProblems(config(thin, thick))).toEqual([]);
    expect(
      topolvmLvmdProblems(
        YAML.parse(
          'socket-name: /tmp/lvmd.sock\ndevice-classes:\n  - name: "ssd"\n    volume-group: "node-myvg1"\n    default: true\n    spare-gb: 1\n',
        ),
      ),
    ).toEqual([]);
  });

  test.each([
    ["no device class", config(), "should have at least one device-class"],
    ["thin without thin-pool", config({ ...thin, "thin-pool": undefined }), "thinpool config is empty"],
    [
      "ratio below 1",
      config({ ...thin, "thin-pool": { name: "p", "overprovision-ratio": 0.5 } }),
      "1.0 or more",
    ],
    [
      "two thick classes on one group",
      config(thick, { ...thick, name: "other" }),
      "duplicate volumegroup/thinpool name: vg2",
    ],
    [
      "two thin classes on one pool",
      config(thin, { ...thin, name: "t2", default: false }),
      "duplicate volumegroup/thinpool name: vg1/pool0",
    ],
    [
      "two defaults",
      config(thin, { ...thick, default: true }),
      "should not have multiple default device-class",
    ],
    ["a misspelt key (lvmd ignores it)", config({ ...thick, "spare-gib": 0 }), "unknown key spare-gib"],
    ["a name lvmd refuses", config({ ...thick, name: "-x" }), "not a qualified name"],
    ["an unknown type", config({ ...thick, type: "linear" }), "type must be thick, thin or empty"],
    ["no volume group", config({ name: "a" }), "volume group name should not be empty"],
  ])("refuses %s", (_name, doc, problem) => {
    expect(topolvmLvmdProblems(JSON.parse(JSON.stringify(doc))).join("\n")).toContain(problem);
  });

  test("the planner's lvmd.yaml for a thin and a thick class passes", () => {
    const spec = {
      volumeGroups: [],
      deviceClasses: [
        {
          name: "thin",
          strategy: "Thin",
          volumeGroup: "vg1",
          default: true,
          thin: { poolName: "pool0", sizePercent: 90, overprovisionRatio: 10 },
        },
        { name: "fast", strategy: "Thick", volumeGroup: "vg2" },
      ],
    };
    const text = renderLvmdYaml(lvmdConfigFor(spec as never, () => true));
    expect(topolvmLvmdProblems(YAML.parse(text))).toEqual([]);
    expect(YAML.parse(text)["device-classes"]).toEqual([thin, thick]);
  });
});
