import * as fs from "node:fs";
import YAML from "yaml";
import { EXAMPLE_FILES, example } from "../../test/api/rule-cases";
import { ValidationError } from "./errors";
import {
  checkLVMNode,
  checkLVMNodeSet,
  checkLVMNodeSetSpec,
  checkManifest,
  kindOf,
  parseLVMNode,
  parseLVMNodeSet,
} from "./validate";

describe("the proposal's examples round-trip unchanged", () => {
  test.each(Object.entries(EXAMPLE_FILES))("%s", (kind, file) => {
    const input = YAML.parse(fs.readFileSync(file, "utf8"));
    expect(checkManifest(input)).toEqual({ kind, name: input.metadata.name, problems: [] });

    const check = kind === "LVMNodeSet" ? checkLVMNodeSet : checkLVMNode;
    const r = check(structuredClone(input));
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    // nothing stripped, nothing defaulted, nothing reordered away
    expect(r.value).toStrictEqual(input);
    expect(YAML.parse(YAML.stringify(r.value))).toStrictEqual(input);
  });
});

describe("checkManifest", () => {
  test.each([
    [
      { kind: "Deployment", apiVersion: "apps/v1" },
      "Deployment",
      [["kind", 'must be "LVMNodeSet" or "LVMNode" (got "Deployment")']],
    ],
    [null, "undefined", [["kind", 'must be "LVMNodeSet" or "LVMNode" (got undefined)']]],
    [
      { kind: "LVMNode", apiVersion: "lvm.topolvm.io/v2beta1", metadata: { name: "n" } },
      "LVMNode",
      [["apiVersion", 'must be "lvm.topolvm.io/v2alpha1" (got "lvm.topolvm.io/v2beta1")']],
    ],
  ])("%j is not one of ours", (input, kind, problems) => {
    const r = checkManifest(input);
    expect(r.kind).toBe(kind);
    expect(r.problems.map((p) => [p.path, p.message])).toEqual(problems);
  });

  test("names the object, or says it has no name", () => {
    expect(checkManifest(example("LVMNode")).name).toBe("archive-storage-node-in-antarctica-east1");
    const unnamed = example("LVMNodeSet");
    delete unnamed.metadata.name;
    expect(checkManifest(unnamed)).toEqual({
      kind: "LVMNodeSet",
      name: "(unnamed)",
      problems: [{ path: "metadata.name", message: "is required" }],
    });
  });

  test("reports every problem at once, even next to type errors", () => {
    const o = example("LVMNodeSet");
    o.spec.template.deviceClasses[0].thin.sizePercent = "90"; // a type error ...
    o.spec.template.volumeGroups[2].name = "vg1"; // ... does not hide a duplicate name ...
    o.spec.template.deviceClasses[0].fsType = "zfs"; // ... nor a missing volume group
    o.spec.template.deviceClasses[0].volumeGroup = "vg9";
    o.status.state = "Fine";
    expect(checkManifest(o).problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      'spec.template.deviceClasses[0].fsType: must be one of "xfs", "ext4", "btrfs" (got "zfs")',
      'spec.template.deviceClasses[0].thin.sizePercent: must be a whole number between 1 and 100 (got "90")',
      'spec.template.volumeGroups[2].name: duplicate volume group name "vg1" (also volumeGroups[0])',
      'spec.template.deviceClasses[0].volumeGroup: names volume group "vg9", which is not in volumeGroups (have: vg1, othervg)',
      'status.state: must be one of "Pending", "Progressing", "Ready", "Degraded", "Failed", "Terminating" (got "Fine")',
    ]);
  });

  test("a volume group whose name cannot be read does not make every device class wrong", () => {
    const o = example("LVMNodeSet");
    o.spec.template.volumeGroups[0].name = 42;
    expect(checkManifest(o).problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      "spec.template.volumeGroups[0].name: must be a string (got 42)",
    ]);
  });

  test.each([
    [{ socketName: "run/lvmd.sock" }, ["spec.lvmd.socketName: must be an absolute path"]],
    [{ socketName: `/${"s".repeat(107)}` }, ["spec.lvmd.socketName: must be at most 107 characters"]],
    [
      { socketName: `/${"é".repeat(60)}` },
      ["spec.lvmd.socketName: must be at most 107 bytes (got 121 bytes as UTF-8)"],
    ],
    [{ socketName: `/${"é".repeat(53)}` }, []],
    [
      { socketName: "/run/lvmd.sock\nsocket-name: /tmp/x" },
      [
        "spec.lvmd.socketName: must not contain control characters or line/paragraph separators (U+000A at character 14)",
      ],
    ],
    [
      { socketName: "/run/lvmd\u2028.sock" },
      [
        "spec.lvmd.socketName: must not contain control characters or line/paragraph separators (U+2028 at character 9)",
      ],
    ],
    [
      { socketName: "/run/lvmd\u2029\t.sock" },
      [
        "spec.lvmd.socketName: must not contain control characters or line/paragraph separators (U+2029 at character 9)",
      ],
    ],
    [{}, ["spec.lvmd.socketName: is required"]],
    [{ socketName: "/run/topolvm/lvmd.sock" }, []],
  ])("LVMNode lvmd %j", (lvmd, expected) => {
    const o = example("LVMNode");
    o.spec.lvmd = lvmd;
    expect(checkManifest(o).problems.map((p) => `${p.path}: ${p.message}`)).toEqual(expected);
  });

  test("an LVMNode has no nodeSelector or template", () => {
    const o = example("LVMNode");
    o.spec.template = {};
    expect(checkManifest(o).problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      "spec.template: unknown field",
    ]);
  });
});

describe("kindOf", () => {
  test.each([
    [{ apiVersion: "lvm.topolvm.io/v2alpha1", kind: "LVMNodeSet" }, "LVMNodeSet"],
    [{ apiVersion: "lvm.topolvm.io/v2alpha1", kind: "LVMNode" }, "LVMNode"],
    [{ apiVersion: "lvm.topolvm.io/v1alpha1", kind: "LVMNode" }, "LVMNode"],
    [{ apiVersion: "lvm.topolvm.io/v1alpha1", kind: "LVMCluster" }, undefined],
    [{ apiVersion: "apps/v1", kind: "LVMNodeSet" }, undefined],
    [{ kind: "LVMNode" }, undefined],
    ["LVMNode", undefined],
    [null, undefined],
  ])("%j → %s", (input, kind) => {
    expect(kindOf(input)).toBe(kind);
  });
});

describe("parse functions throw one error listing every problem", () => {
  test("parseLVMNodeSet", () => {
    const o = example("LVMNodeSet");
    o.spec.template.volumeGroups[1].name = "vg1";
    o.spec.template.deviceClasses[0].thin.sizePercent = 120;
    expect(() => parseLVMNodeSet(o)).toThrow(
      new ValidationError("LVMNodeSet my-lvmnodeset", [
        {
          path: "spec.template.deviceClasses[0].thin.sizePercent",
          message: "must be between 1 and 100 (got 120)",
        },
        {
          path: "spec.template.volumeGroups[1].name",
          message: 'duplicate volume group name "vg1" (also volumeGroups[0])',
        },
      ]),
    );
    try {
      parseLVMNodeSet(o);
    } catch (e) {
      expect((e as Error).message).toBe(
        [
          "LVMNodeSet my-lvmnodeset is invalid:",
          "  spec.template.deviceClasses[0].thin.sizePercent: must be between 1 and 100 (got 120)",
          '  spec.template.volumeGroups[1].name: duplicate volume group name "vg1" (also volumeGroups[0])',
        ].join("\n"),
      );
    }
  });

  test("parseLVMNode returns the object when it is valid", () => {
    expect(parseLVMNode(example("LVMNode"))).toStrictEqual(example("LVMNode"));
    expect(() => parseLVMNode({ kind: "LVMNode" })).toThrow("LVMNode (unnamed) is invalid:");
  });
});

describe("checkLVMNodeSetSpec (component arguments)", () => {
  test("paths start at the prefix the caller gives", () => {
    const spec = example("LVMNodeSet").spec;
    spec.template.deviceClasses[0].default = "yes";
    const r = checkLVMNodeSetSpec(spec, ["args", "spec"]);
    expect(r).toEqual({
      ok: false,
      problems: [
        { path: "args.spec.template.deviceClasses[0].default", message: 'must be a boolean (got "yes")' },
      ],
    });
  });

  test("a valid spec comes back as it was", () => {
    const spec = example("LVMNodeSet").spec;
    expect(checkLVMNodeSetSpec(spec)).toEqual({ ok: true, value: spec });
  });
});

describe("approvalPolicy", () => {
  const spec = (approvalPolicy: unknown) => ({
    template: {
      volumeGroups: [
        {
          name: "vg1",
          deviceSelector: {
            deviceSelectorTerms: [
              { matchExpressions: [{ key: "path", operator: "In", values: ["/dev/sdb"] }] },
            ],
          },
        },
      ],
      approvalPolicy,
    },
  });
  test.each(["Automatic", "Destructive", "Always"])("%s is accepted", (p) => {
    expect(checkLVMNodeSetSpec(spec(p)).ok).toBe(true);
  });
  test("anything else is refused, naming the field and the choices", () => {
    const r = checkLVMNodeSetSpec(spec("Sometimes"), ["spec"]);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => p.path)).toEqual(["spec.template.approvalPolicy"]);
    expect(r.problems[0]!.message).toMatch(/Automatic.*Destructive.*Always/);
  });
});
