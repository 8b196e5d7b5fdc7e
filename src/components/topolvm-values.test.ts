import fc from "fast-check";
import { ValidationError, type DeviceClass, type NodeSelector } from "../api";
import { matchesNodeSelector } from "../planner/node-selector";
import { chartOnNode } from "../../test/support/components/topolvm-chart";
import {
  lvmdDeviceClasses,
  mergeValues,
  OWNED_VALUES,
  planTopolvm,
  topolvmValues,
  type LvmdNodeSet,
} from "./topolvm-values";

const thin: DeviceClass = {
  name: "fast",
  strategy: "Thin",
  volumeGroup: "vg-data",
  default: true,
  thin: { poolName: "pool0", sizePercent: 90, overprovisionRatio: 5 },
};
const thick: DeviceClass = { name: "bulk", strategy: "Thick", volumeGroup: "vg-bulk", fsType: "ext4" };
const LVMD_FAST = {
  name: "fast",
  "volume-group": "vg-data",
  default: true,
  type: "thin",
  "spare-gb": 0,
  "thin-pool": { name: "pool0", "overprovision-ratio": 5 },
};
const LVMD_BULK = { name: "bulk", "volume-group": "vg-bulk", type: "thick", "spare-gb": 0 };

const inZone = (zone: string): NodeSelector => ({
  nodeSelectorTerms: [{ matchExpressions: [{ key: "zone", operator: "In", values: [zone] }] }],
});
const onlyIn = (zone: string) => ({
  nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: inZone(zone) },
});
const LINUX = { "kubernetes.io/os": "linux" };

describe("lvmdDeviceClasses", () => {
  test.each([
    [thin, LVMD_FAST],
    [thick, LVMD_BULK],
    [{ ...thick, default: false }, LVMD_BULK],
  ])("%j → %j", (dc, entry) => {
    expect(lvmdDeviceClasses([dc])).toEqual([entry]);
  });
});

describe("mergeValues", () => {
  test.each([
    [{ a: 1 }, { b: 2 }, { a: 1, b: 2 }],
    [{ a: { x: 1, y: 1 } }, { a: { y: 2 } }, { a: { x: 1, y: 2 } }],
    [{ a: [1, 2] }, { a: [3] }, { a: [3] }],
    [{ a: { x: 1 } }, { a: "flat" }, { a: "flat" }],
    [{ a: "flat" }, { a: { x: 1 } }, { a: { x: 1 } }],
  ])("%j under %j → %j", (base, top, merged) => {
    expect(mergeValues(base, top)).toEqual(merged);
  });
});

describe("planTopolvm", () => {
  test("two zones: one lvmd per zone with its own classes, topolvm-node on both, the user's values kept", () => {
    const plan = planTopolvm({
      nodeSets: [
        { name: "south", nodeSelector: inZone("south"), deviceClasses: [thick] },
        { name: "north", nodeSelector: inZone("north"), deviceClasses: [thin, thick] },
      ],
      tolerations: [{ operator: "Exists" }],
      values: {
        "cert-manager": { enabled: true },
        lvmd: {
          env: [{ name: "LVM_SYSTEM_DIR", value: "/tmp" }],
          lvcreateOptionClasses: [{ name: "raid1" }],
        },
      },
    });
    expect(plan.problems).toEqual([]);
    expect(plan.overlaps).toEqual([]);
    expect(plan.values).toEqual({
      "cert-manager": { enabled: true },
      crd: { annotations: { "helm.sh/resource-policy": "keep" } },
      lvmd: {
        env: [{ name: "LVM_SYSTEM_DIR", value: "/tmp" }],
        lvcreateOptionClasses: [{ name: "raid1" }],
        managed: true,
        socketName: "/run/topolvm/lvmd.sock",
        // "north" sorts first: it is the chart's own lvmd (DaemonSet topolvm-lvmd-0)...
        deviceClasses: [LVMD_FAST, LVMD_BULK],
        nodeSelector: LINUX,
        tolerations: [{ operator: "Exists" }],
        affinity: onlyIn("north"),
        // ... and "south" its first additional config (topolvm-lvmd-1), with the per-lvmd values copied.
        additionalConfigs: [
          {
            deviceClasses: [LVMD_BULK],
            nodeSelector: LINUX,
            tolerations: [{ operator: "Exists" }],
            affinity: onlyIn("south"),
            lvcreateOptionClasses: [{ name: "raid1" }],
          },
        ],
      },
      node: {
        lvmdEmbedded: false,
        lvmdSocket: "/run/topolvm/lvmd.sock",
        nodeSelector: LINUX,
        tolerations: [{ operator: "Exists" }],
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [...inZone("north").nodeSelectorTerms, ...inZone("south").nodeSelectorTerms],
            },
          },
        },
      },
      storageClasses: [],
    });
  });

  test("one node set on every node: no affinity anywhere, lvmd on the agents' nodes", () => {
    const plan = planTopolvm({
      nodeSets: [{ name: "all", deviceClasses: [thin] }],
      agentNodeSelector: { "acme.com/storage": "true" },
    });
    expect(plan.values).toMatchObject({
      lvmd: {
        deviceClasses: [LVMD_FAST],
        nodeSelector: { "acme.com/storage": "true" },
        tolerations: [],
        affinity: {},
        additionalConfigs: [],
      },
      node: { nodeSelector: { "acme.com/storage": "true" }, affinity: {} },
    });
  });

  test("a node set without device classes runs no lvmd, but its nodes stay out of the others' lvmd", () => {
    const plan = planTopolvm({
      nodeSets: [
        { name: "storage", deviceClasses: [thin] },
        { name: "edge", nodeSelector: inZone("edge"), deviceClasses: [] },
      ],
    });
    expect(plan.lvmds.map((l) => [l.nodeSet, l.placement])).toEqual([
      [
        "storage",
        {
          kind: "nodes",
          nodeSelector: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: "zone", operator: "NotIn", values: ["edge"] }] }],
          },
        },
      ],
    ]);
    expect(plan.overlaps).toEqual([["edge", "storage"]]);
  });

  test.each<[string, LvmdNodeSet[], Record<string, unknown>, Array<{ path: string; message: string }>]>([
    [
      "no node set with device classes",
      [{ name: "bare", deviceClasses: [] }],
      {},
      [
        {
          path: "topolvm.nodeSets",
          message:
            "no node set has a device class, and lvmd refuses to start without one: leave topolvm out until one has",
        },
      ],
    ],
    [
      "two node sets with the same selector",
      [
        { name: "a", nodeSelector: inZone("x"), deviceClasses: [thin] },
        { name: "b", nodeSelector: inZone("x"), deviceClasses: [thick] },
      ],
      {},
      [
        {
          path: "topolvm.nodeSets",
          message:
            "no node would run lvmd: every node a node set with device classes selects is selected by another node set too, and a node belongs to at most one",
        },
      ],
    ],
    [
      "a duplicate name",
      [
        { name: "a", nodeSelector: inZone("x"), deviceClasses: [thin] },
        { name: "a", nodeSelector: inZone("y"), deviceClasses: [thin] },
      ],
      {},
      [{ path: "topolvm.nodeSets[1].name", message: 'duplicate node set name "a" (also nodeSets[0])' }],
    ],
    [
      "values LvmSystem derives",
      [{ name: "a", deviceClasses: [thin] }],
      { lvmd: { managed: false, affinity: {} }, node: { tolerations: [] }, storageClasses: [] },
      [
        {
          path: "topolvm.values.lvmd.managed",
          message: "is set by LvmSystem: each node set's lvmd runs as its own DaemonSet of the chart",
        },
        {
          path: "topolvm.values.lvmd.affinity",
          message:
            "is set by LvmSystem: each node set's lvmd runs on exactly the nodes it selects (topolvm.nodeSets)",
        },
        {
          path: "topolvm.values.node.tolerations",
          message: "is set by LvmSystem: topolvm-node tolerates the agents' taints (tolerations)",
        },
        {
          path: "topolvm.values.storageClasses",
          message: "is set by LvmSystem: the DeviceClass components create the StorageClasses",
        },
      ],
    ],
  ])("problem: %s", (_, nodeSets, values, problems) => {
    expect(planTopolvm({ nodeSets, values }).problems).toEqual(problems);
  });

  test("every key LvmSystem derives is refused as a user value", () => {
    for (const [path] of OWNED_VALUES) {
      const values = path
        .split(".")
        .reverse()
        .reduce<unknown>((inner, key) => ({ [key]: inner }), "x") as Record<string, unknown>;
      expect(planTopolvm({ nodeSets: [{ name: "a", deviceClasses: [thin] }], values }).problems).toEqual([
        expect.objectContaining({ path: `topolvm.values.${path}` }),
      ]);
    }
  });

  test("TopoLVM's CRDs are kept when the chart is deleted; the user's other CRD annotations stay", () => {
    const nodeSets = [{ name: "a", deviceClasses: [thin] }];
    expect(planTopolvm({ nodeSets }).values["crd"]).toEqual({
      annotations: { "helm.sh/resource-policy": "keep" },
    });
    const values = { crd: { annotations: { "example.com/owner": "storage" } } };
    expect(planTopolvm({ nodeSets, values }).values["crd"]).toEqual({
      annotations: { "example.com/owner": "storage", "helm.sh/resource-policy": "keep" },
    });
    const refused = { crd: { annotations: { "helm.sh/resource-policy": "delete" } } };
    expect(planTopolvm({ nodeSets, values: refused }).problems).toEqual([
      expect.objectContaining({ path: 'topolvm.values.crd.annotations["helm.sh/resource-policy"]' }),
    ]);
    expect(
      planTopolvm({ nodeSets, values: { crd: { annotations: { "helm.sh/resource-policy": "keep" } } } })
        .problems,
    ).toEqual([]);
  });

  test("topolvmValues throws a ValidationError with the problems", () => {
    expect(() => topolvmValues({ nodeSets: [{ name: "bare" }] })).toThrow(ValidationError);
    expect(topolvmValues({ nodeSets: [{ name: "a", deviceClasses: [thin] }] })).toMatchObject({
      lvmd: { deviceClasses: [LVMD_FAST] },
    });
  });
});

/* ------------------------------------------------------------------------------ properties ---- */

const ZONES = ["a", "b", "c"];
const selectorArb: fc.Arbitrary<NodeSelector | undefined> = fc.option(
  fc
    .array(
      fc.record({
        matchExpressions: fc.array(
          fc.oneof(
            fc.record({
              key: fc.constantFrom("zone", "role"),
              operator: fc.constantFrom("In" as const, "NotIn" as const),
              values: fc.uniqueArray(fc.constantFrom(...ZONES), { minLength: 1, maxLength: 2 }),
            }),
            fc.record({
              key: fc.constantFrom("zone", "role"),
              operator: fc.constantFrom("Exists" as const, "DoesNotExist" as const),
            }),
          ),
          { minLength: 1, maxLength: 2 },
        ),
      }),
      { minLength: 1, maxLength: 2 },
    )
    .map((nodeSelectorTerms) => ({ nodeSelectorTerms })),
  { nil: undefined, freq: 4 },
);
const classesArb = fc.subarray([thin, thick]);
const nodeSetsArb = fc
  .array(fc.record({ nodeSelector: selectorArb, deviceClasses: classesArb }), { minLength: 1, maxLength: 4 })
  .map((sets) =>
    sets.map(({ nodeSelector, deviceClasses }, i): LvmdNodeSet => ({
      name: `set-${i}`,
      deviceClasses,
      ...(nodeSelector ? { nodeSelector } : {}),
    })),
  );
const nodeArb = fc.record({
  name: fc.constantFrom("n1", "n2"),
  labels: fc
    .record({
      zone: fc.option(fc.constantFrom(...ZONES), { nil: undefined }),
      role: fc.option(fc.constantFrom(...ZONES), { nil: undefined }),
      os: fc.constantFrom("linux", "windows"),
    })
    .map(({ zone, role, os }) => ({
      "kubernetes.io/os": os,
      ...(zone ? { zone } : {}),
      ...(role ? { role } : {}),
    })),
});

describe("properties", () => {
  test("a node gets exactly the classes of the one node set that selects it, and lvmd only where an agent runs", () => {
    fc.assert(
      fc.property(nodeSetsArb, fc.array(nodeArb, { minLength: 1, maxLength: 8 }), (nodeSets, nodes) => {
        const plan = planTopolvm({ nodeSets });
        fc.pre(plan.problems.length === 0);
        for (const node of nodes) {
          const selecting = nodeSets.filter((s) => matchesNodeSelector(s.nodeSelector, node));
          const agent = node.labels["kubernetes.io/os"] === "linux";
          const only = selecting.length === 1 && agent ? selecting[0]! : undefined;
          const expected = only?.deviceClasses?.length ? [lvmdDeviceClasses(only.deviceClasses)] : [];
          const { lvmdDeviceClasses: lvmds, topolvmNode } = chartOnNode(plan.values, node);
          expect(lvmds).toEqual(expected);
          expect(topolvmNode).toBe(expected.length === 1);
        }
      }),
      { numRuns: 400 },
    );
  });

  test("the values do not depend on the order the node sets are listed in", () => {
    fc.assert(
      fc.property(
        nodeSetsArb.chain((sets) =>
          fc.tuple(fc.constant(sets), fc.shuffledSubarray(sets, { minLength: sets.length })),
        ),
        ([sets, shuffled]) => {
          expect(planTopolvm({ nodeSets: shuffled }).values).toEqual(planTopolvm({ nodeSets: sets }).values);
        },
      ),
      { numRuns: 200 },
    );
  });
});
