import * as pulumi from "@pulumi/pulumi";
import { ValidationError } from "../api";
import { LvmSystem, type LvmSystemArgs } from "./lvm-system";
import { NodeSet, type NodeSetArgs } from "./node-set";
import { crdDirectory } from "../../test/support/components/crd-fixtures";
import {
  find,
  installMocks,
  ofType,
  runFailingProgram,
  runProgram,
} from "../../test/support/components/pulumi-mocks";
import { Topolvm, TOPOLVM_TYPE } from "./topolvm";

const CHART = "kubernetes:helm.sh/v4:Chart";
// Each test runs two or three programs against the mocks: seconds each on a loaded machine.
jest.setTimeout(120_000);

let crds: { dir: string; remove: () => void };
beforeAll(async () => {
  await installMocks();
  crds = crdDirectory();
});
afterAll(() => crds.remove());

const zone = (key: string, operator: string, values: string[]) => ({
  nodeSelectorTerms: [{ matchExpressions: [{ key, operator, values }] }],
});
const disks = {
  deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "In", values: ["vdb"] }] }],
};
const thin = {
  name: "fast",
  strategy: "Thin",
  volumeGroup: "vg-data",
  default: true,
  thin: { poolName: "pool0", sizePercent: 90, overprovisionRatio: 10 },
};
const thick = { name: "bulk", strategy: "Thick", volumeGroup: "vg-bulk", fsType: "ext4" };

type NamedSet = { name: string } & NodeSetArgs;
/**
 * Node sets as programs declare them: different zones and classes, one that shares nodes with
 * another (its lvmd gets an exclusion affinity), one without classes, one by nodeSetName.
 */
const scenarios: Array<[string, NamedSet[], Partial<LvmSystemArgs>, Record<string, unknown>]> = [
  [
    "two zones",
    [
      {
        name: "north",
        nodeSelector: zone("topology.kubernetes.io/zone", "In", ["north"]),
        template: {
          volumeGroups: [
            { name: "vg-data", deviceSelector: disks },
            { name: "vg-bulk", deviceSelector: disks },
          ],
          deviceClasses: [thin, thick],
        },
      },
      {
        name: "south",
        nodeSelector: zone("topology.kubernetes.io/zone", "In", ["south"]),
        template: { volumeGroups: [{ name: "vg-bulk", deviceSelector: disks }], deviceClasses: [thick] },
      },
    ],
    {},
    {},
  ],
  [
    "overlapping selectors, agents' placement, shared lvmd values, a set without classes",
    [
      {
        name: "storage",
        nodeSelector: zone("acme.com/role", "In", ["storage"]),
        template: { volumeGroups: [{ name: "vg-bulk", deviceSelector: disks }], deviceClasses: [thick] },
      },
      {
        name: "edge",
        nodeSelector: zone("topology.kubernetes.io/zone", "NotIn", ["core"]),
        template: {
          volumeGroups: [{ name: "vg-data", deviceSelector: disks }],
          deviceClasses: [{ ...thin, default: false }],
        },
      },
      {
        name: "scratch",
        nodeSetName: "scratch-disks",
        nodeSelector: zone("acme.com/scratch", "Exists", []),
        template: { volumeGroups: [{ name: "vg-scratch", deviceSelector: disks }] },
      } as NamedSet,
    ],
    {
      nodeSelector: { "acme.com/storage": "true" },
      tolerations: [{ key: "node-role.kubernetes.io/storage", operator: "Exists", effect: "NoSchedule" }],
    },
    {
      "cert-manager": { enabled: true },
      lvmd: { lvcreateOptionClasses: [{ name: "raid1", options: ["--type=raid1"] }], env: [] },
    },
  ],
];

function systemArgs(extra: Partial<LvmSystemArgs>): LvmSystemArgs {
  return { agentImage: "ghcr.io/acme/pulumi-lvm:0.1.0", crdDirectory: crds.dir, ...extra };
}

/** main's program: every node set twice, in LvmSystem's topolvm.nodeSets and as a NodeSet. */
function declaredTwice(sets: NamedSet[], system: Partial<LvmSystemArgs>, values: Record<string, unknown>) {
  return () => {
    const lvm = new LvmSystem(
      "lvm",
      systemArgs({
        ...system,
        topolvm: {
          chartVersion: "15.7.1",
          values,
          nodeSets: sets.map(({ name, nodeSetName, nodeSelector, template }) => ({
            name: nodeSetName ?? name,
            ...(nodeSelector ? { nodeSelector } : {}),
            template,
          })),
        },
      }),
    );
    for (const { name, ...args } of sets) new NodeSet(name, args, { system: lvm });
  };
}

/** The same, each node set declared once and given to a Topolvm. */
function declaredOnce(sets: NamedSet[], system: Partial<LvmSystemArgs>, values: Record<string, unknown>) {
  return () => {
    const lvm = new LvmSystem("lvm", systemArgs(system));
    const nodeSets = sets.map(({ name, ...args }) => new NodeSet(name, args, { system: lvm }));
    new Topolvm("lvm-topolvm", { chartVersion: "15.7.1", values }, { system: lvm, nodeSets });
  };
}

describe("Topolvm: each node set declared once", () => {
  test.each(scenarios)(
    "%s: the chart's values are byte for byte those of the program that declared every node set twice",
    async (_, sets, system, values) => {
      const warn = jest.spyOn(pulumi.log, "warn").mockImplementation(() => Promise.resolve());
      try {
        const twice = find(await runProgram(declaredTwice(sets, system, values)), CHART, "lvm-topolvm");
        const warnedTwice = warn.mock.calls.map(([m]) => m);
        warn.mockClear();
        const once = find(await runProgram(declaredOnce(sets, system, values)), CHART, "lvm-topolvm");
        expect(JSON.stringify(once.inputs.values)).toBe(JSON.stringify(twice.inputs.values));
        expect(once.inputs).toEqual(twice.inputs);
        // The same overlap warnings (the second scenario has one).
        expect(warn.mock.calls.map(([m]) => m)).toEqual(warnedTwice);
      } finally {
        warn.mockRestore();
      }
    },
  );

  test("the chart keeps its place in existing stacks: an alias to where LvmSystem's topolvm arg put it", async () => {
    let system: LvmSystem | undefined;
    const [sets] = [scenarios[0]![1]];
    const recorded = await runProgram(() => {
      system = new LvmSystem("lvm", systemArgs({}));
      const nodeSets = sets.map(({ name, ...args }) => new NodeSet(name, args, { system }));
      new Topolvm("lvm-topolvm", { chartVersion: "15.7.1" }, { system, nodeSets });
    });
    const component = find(recorded, TOPOLVM_TYPE, "lvm-topolvm");
    // Not the system's child: NodeSets depend on the system (and its children), this on them.
    expect(component.parent).toBeUndefined();
    // After the namespace and every node set: a new group exists before lvmd restarts with its class.
    expect(component.opts.dependsOn).toEqual([
      find(recorded, "kubernetes:core/v1:Namespace", "lvm-namespace").resource,
      ...ofType(recorded, "pulumi-lvm:index:NodeSet").map((r) => r.resource),
    ]);
    const chart = find(recorded, CHART, "lvm-topolvm");
    expect(chart.parent).toEqual({ type: TOPOLVM_TYPE, name: "lvm-topolvm" });
    expect(chart.opts.aliases).toEqual([{ name: "lvm-topolvm", parent: system }]);
    const patch = find(recorded, "kubernetes:core/v1:NamespacePatch", "lvm-topolvm-namespace");
    expect(patch.inputs.metadata).toEqual({ name: "lvm-system", labels: { "topolvm.io/webhook": "ignore" } });
    expect(chart.opts.dependsOn).toEqual([patch.resource]);
    // Without TopoLVM in its args, the system's own namespace has no webhook label (the patch adds it).
    expect(find(recorded, "kubernetes:core/v1:Namespace", "lvm-namespace").inputs.metadata.labels).toEqual({
      "pod-security.kubernetes.io/enforce": "privileged",
    });
  });

  test("a deletion guard for the node sets with deletionPolicy Delete, deleted before the chart on destroy; none without one", async () => {
    const [{ name: _n, ...north }, { name: _s, ...south }] = scenarios[0]![1] as [NamedSet, NamedSet];
    const program = (policy: "Delete" | "Retain") => () => {
      const lvm = new LvmSystem("lvm", systemArgs({}));
      const nodeSets = [
        new NodeSet(
          "north",
          { ...north, template: { ...north.template, deletionPolicy: policy } },
          { system: lvm },
        ),
        new NodeSet("south", south, { system: lvm }),
      ];
      new Topolvm("lvm-topolvm", { chartVersion: "15.7.1", releaseName: "tl" }, { system: lvm, nodeSets });
    };
    const recorded = await runProgram(program("Delete"));
    const guard = find(recorded, "kubernetes:core/v1:ConfigMap", "lvm-topolvm-deletion-guard");
    expect(guard.inputs).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "tl-deletion-guard",
        namespace: "lvm-system",
        labels: { "lvm.topolvm.io/deletion-guard": "true" },
        // Says on the object what it is and how to let it go with no operator to answer.
        annotations: {
          "lvm.topolvm.io/description": expect.stringContaining(
            "remove the label lvm.topolvm.io/deletion-guard",
          ),
        },
      },
      data: { nodeSets: "north" },
    });
    // It depends on the chart (and its objects, none under the mocks): pulumi destroy deletes it first, and stops there while it is refused.
    const dependsOn = await new Promise((resolve) =>
      (guard.opts.dependsOn as pulumi.Output<unknown[]>).apply(resolve),
    );
    expect(dependsOn).toEqual([find(recorded, CHART, "lvm-topolvm").resource]);
    expect(guard.parent).toEqual({ type: TOPOLVM_TYPE, name: "lvm-topolvm" });
    const retained = await runProgram(program("Retain"));
    expect(ofType(retained, "kubernetes:core/v1:ConfigMap")).toEqual([]);
  });

  test("refused before anything registers: a NodeSet of another namespace, a system that installs TopoLVM itself, duplicate names", async () => {
    const [{ name: _n, ...north }, { name: _s, ...south }] = scenarios[0]![1] as [NamedSet, NamedSet];
    const { error } = await runFailingProgram(() => {
      const lvm = new LvmSystem(
        "lvm",
        systemArgs({
          topolvm: { chartVersion: "15.7.1", nodeSets: [{ name: "north", template: north.template }] },
        }),
      );
      const elsewhere = new NodeSet("elsewhere", { ...south, namespace: "other" });
      new Topolvm("tl", { chartVersion: "15.7.1" }, { system: lvm, nodeSets: [elsewhere] });
    });
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toBe(
      [
        'Topolvm "tl" is invalid:',
        '  opts.system: LvmSystem "lvm" already installs TopoLVM from its topolvm arg: give the node sets to one of them',
        '  opts.nodeSets[0]: NodeSet "elsewhere" is in namespace "other", LvmSystem "lvm" in "lvm-system": its agents never build that node set',
      ].join("\n"),
    );

    const duplicate = await runFailingProgram(() => {
      const lvm = new LvmSystem("lvm", systemArgs({}));
      const a = new NodeSet("a", { ...north, nodeSetName: "same" });
      const b = new NodeSet("b", { ...south, nodeSetName: "same" });
      new Topolvm("tl", { chartVersion: "15.7.1" }, { system: lvm, nodeSets: [a, b] });
    });
    expect((duplicate.error as Error).message).toContain(
      'opts.nodeSets[1].name: duplicate node set name "same" (also nodeSets[0])',
    );
  });

  test("without its system: an error that says how to pass it", () => {
    expect(
      () =>
        new Topolvm(
          "tl",
          { chartVersion: "15.7.1" },
          {} as unknown as ConstructorParameters<typeof Topolvm>[2],
        ),
    ).toThrow(/needs its LvmSystem as the option `system`/);
  });
});
