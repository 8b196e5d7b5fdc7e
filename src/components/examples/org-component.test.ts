import * as path from "node:path";
import { ValidationError } from "../../api";
import {
  acmeNodeSet,
  AcmeEdgeStorage,
  type AcmeEdgeStorageArgs,
} from "../../../examples/org-component/acme-edge-storage";
import type { LvmSystem } from "../lvm-system";
import {
  find,
  installMocks,
  ofType,
  runFailingProgram,
  runProgram,
  runProgramDirectory,
  type Recorded,
} from "../../../test/support/components/pulumi-mocks";

/** examples/org-component: a company component wrapping NodeSet with its defaults and guardrails. */
const program = path.resolve(__dirname, "../../../examples/org-component");

const byModel = {
  deviceSelectorTerms: [
    { matchExpressions: [{ key: "model", operator: "In", values: ["Micron_7450_MTFDKBG1T9TFR"] }] },
  ],
};

function args(over: Partial<AcmeEdgeStorageArgs["template"]> = {}): AcmeEdgeStorageArgs {
  return {
    site: "ber-01",
    template: {
      volumeGroups: [{ name: "vg-local", deviceSelector: byModel }],
      deviceClasses: [
        {
          name: "local",
          strategy: "Thin",
          volumeGroup: "vg-local",
          thin: { poolName: "pool0", sizePercent: 95, overprovisionRatio: 4 },
        },
      ],
      ...over,
    },
  };
}

beforeAll(installMocks);

describe("the program", () => {
  let recorded: Recorded[];
  beforeAll(async () => {
    ({ recorded } = await runProgramDirectory(program));
  });

  test("AcmeEdgeStorage wraps a NodeSet named after the site", () => {
    expect(
      recorded
        .filter((r) => !r.type.startsWith("kubernetes:") || r.parent?.type !== "pulumi-lvm:index:LvmSystem")
        .map((r) => [r.type, r.name, r.parent?.name]),
    ).toEqual([
      ["pulumi-lvm:index:LvmSystem", "lvm", undefined],
      ["acme:storage:EdgeStorage", "ber-01", undefined],
      ["pulumi-lvm:index:NodeSet", "ber-01-lvm", "ber-01"],
      ["kubernetes:lvm.topolvm.io/v2alpha1:LVMNodeSet", "ber-01-lvm", "ber-01-lvm"],
      ["pulumi-lvm:index:VolumeGroup", "ber-01-lvm-vg-local", "ber-01-lvm"],
      ["pulumi-lvm:index:DeviceClass", "ber-01-lvm-local", "ber-01-lvm"],
      ["kubernetes:storage.k8s.io/v1:StorageClass", "ber-01-lvm-local-storage-class", "ber-01-lvm-local"],
      [
        "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshotClass",
        "ber-01-lvm-local-snapshot-class",
        "ber-01-lvm-local",
      ],
    ]);
  });

  test("Acme's defaults reach the cluster objects", () => {
    const cr = find(recorded, "kubernetes:lvm.topolvm.io/v2alpha1:LVMNodeSet", "ber-01-lvm").inputs;
    expect(cr.metadata).toEqual({
      name: "acme-ber-01",
      namespace: "lvm-system",
      labels: { "acme.com/site": "ber-01" },
      // The NodeSet component's mark that its DeviceClasses own the classes (the operator then
      // creates none for this set: docs/operator.md, issue 17).
      // And the Kubernetes provider's await: up waits until the operator built the set on its nodes
      // (NodeSet's awaitNodesReady).
      annotations: {
        "lvm.topolvm.io/device-class-objects": "pulumi",
        "pulumi.com/waitFor": "condition=LVMNodesReady",
        "pulumi.com/timeoutSeconds": "600",
      },
    });
    expect(cr.spec.nodeSelector).toEqual({
      nodeSelectorTerms: [
        { matchExpressions: [{ key: "acme.com/site", operator: "In", values: ["ber-01"] }] },
      ],
    });
    expect(cr.spec.template.deletionPolicy).toBe("Retain");
    expect(
      find(recorded, "kubernetes:storage.k8s.io/v1:StorageClass", "ber-01-lvm-local-storage-class").inputs,
    ).toMatchObject({
      metadata: { name: "acme-local", labels: { "acme.com/site": "ber-01" } },
      reclaimPolicy: "Retain",
      parameters: { "csi.storage.k8s.io/fstype": "xfs" },
    });
    expect(
      find(
        recorded,
        "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshotClass",
        "ber-01-lvm-local-snapshot-class",
      ).inputs,
    ).toMatchObject({
      metadata: { name: "acme-local" },
      deletionPolicy: "Retain",
    });
  });

  test("TopoLVM's lvmd serves the site's node set, as AcmeEdgeStorage creates it, on the site's nodes", () => {
    const { lvmd } = find(recorded, "kubernetes:helm.sh/v4:Chart", "lvm-topolvm").inputs.values;
    expect(lvmd).toMatchObject({
      deviceClasses: [
        {
          name: "local",
          "volume-group": "vg-local",
          default: true,
          type: "thin",
          "spare-gb": 0,
          "thin-pool": { name: "pool0", "overprovision-ratio": 4 },
        },
      ],
      nodeSelector: { "acme.com/site": "ber-01" },
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: "acme.com/site", operator: "In", values: ["ber-01"] }] },
            ],
          },
        },
      },
      additionalConfigs: [],
    });
  });

  test("its NodeSet is given the system: it waits for it, and a template that strays from the entry is refused", async () => {
    const system = find(recorded, "pulumi-lvm:index:LvmSystem", "lvm").resource as LvmSystem;
    expect(find(recorded, "pulumi-lvm:index:NodeSet", "ber-01-lvm").opts.dependsOn).toEqual([system]);
    const { error, registered } = await runFailingProgram(
      () => new AcmeEdgeStorage("ber-01", args({ deletionPolicy: "Retain" }), { system }),
    );
    expect(error.message).toBe(
      [
        'NodeSet "ber-01-lvm" is invalid:',
        `  args.template.deviceClasses[0].default: is not set, but LvmSystem "lvm" has true at args.topolvm.nodeSets[0].template.deviceClasses[0].default, from which TopoLVM's lvmd is configured: give both the same value`,
      ].join("\n"),
    );
    // Only the AcmeEdgeStorage itself (its super call precedes its NodeSet's check); no cluster object.
    expect(registered).toBe(1);
    const elsewhere = await runFailingProgram(
      () => new AcmeEdgeStorage("muc-02", { ...args(), site: "muc-02" }, { system }),
    );
    expect((elsewhere.error as ValidationError).problems[0]!.message).toMatch(
      /^is "acme-muc-02", which LvmSystem "lvm" does not list in args.topolvm.nodeSets \(it lists "acme-ber-01"\)/,
    );
  });

  test("acmeNodeSet refuses what AcmeEdgeStorage refuses", () => {
    expect(() => acmeNodeSet({ ...args(), site: "Berlin" })).toThrow(
      'acmeNodeSet("Berlin") is invalid:\n  args.site: must be an Acme site code such as "ber-01" (got "Berlin")',
    );
  });

  test("the agents run on the site's nodes with Acme's priority", () => {
    const pod = find(recorded, "kubernetes:apps/v1:DaemonSet", "lvm-agent").inputs.spec.template.spec;
    expect(pod).toMatchObject({
      nodeSelector: { "acme.com/site": "ber-01" },
      priorityClassName: "system-node-critical",
    });
  });
});

describe("guardrails", () => {
  test("forbidden wiping, a foreign class name and an API problem, all at once, before anything registers", async () => {
    const bad = args({
      volumeGroups: [{ name: "vg-local", deviceSelector: byModel, forceWipeDevicesAndDestroyAllData: true }],
      deviceClasses: [
        {
          name: "local",
          strategy: "Thin",
          volumeGroup: "vg-local",
          thin: { poolName: "pool0", sizePercent: 120, overprovisionRatio: 4 },
          storageClass: { namingPolicy: "Explicit", name: "fast" },
        },
      ],
    });
    const { error, registered } = await runFailingProgram(() => new AcmeEdgeStorage("ber-01", bad));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.message).toBe(
      [
        'AcmeEdgeStorage "ber-01" is invalid:',
        "  args.template.volumeGroups[0].forceWipeDevicesAndDestroyAllData: is forbidden at Acme: disks are wiped by the hardware intake runbook, never from Pulumi",
        '  args.template.deviceClasses[0].storageClass.name: must start with "acme-" (got "fast")',
        "  args.template.deviceClasses[0].thin.sizePercent: must be between 1 and 100 (got 120)",
      ].join("\n"),
    );
    expect(registered).toBe(0);
  });

  test("site code, deletion policy and prefixes", async () => {
    const bad = {
      ...args({
        deletionPolicy: "Delete",
        deviceClasses: [{ ...args().template.deviceClasses![0]!, snapshotClass: { prefix: "lvms" } }],
      }),
      site: "Berlin",
    };
    const { error } = await runFailingProgram(() => new AcmeEdgeStorage("berlin", bad));
    expect((error as ValidationError).problems).toEqual([
      { path: "args.site", message: 'must be an Acme site code such as "ber-01" (got "Berlin")' },
      {
        path: "args.template.deletionPolicy",
        message: 'must be "Retain" at Acme: volume groups outlive their node sets',
      },
      { path: "args.template.deviceClasses[0].snapshotClass.prefix", message: 'must be "acme" (got "lvms")' },
    ]);
  });

  test("an explicit acme- name is allowed and used as is", async () => {
    const ok = args({
      deviceClasses: [
        {
          ...args().template.deviceClasses![0]!,
          storageClass: { namingPolicy: "Explicit", name: "acme-fast-local" },
        },
      ],
    });
    const recorded = await runProgram(() => new AcmeEdgeStorage("ber-01", ok));
    expect(
      ofType(recorded, "kubernetes:storage.k8s.io/v1:StorageClass").map((r) => r.inputs.metadata.name),
    ).toEqual(["acme-fast-local"]);
  });
});
