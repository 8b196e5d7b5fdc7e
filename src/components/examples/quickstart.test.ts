import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import {
  find,
  installMocks,
  ofType,
  runProgramDirectory,
  type Recorded,
} from "../../../test/support/components/pulumi-mocks";

/** examples/quickstart as `pulumi up` runs it (its disk list, the rest default), against mocks. */
const program = path.resolve(__dirname, "../../../examples/quickstart");

function outputOf<T>(o: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => o.apply(resolve));
}

let recorded: Recorded[];
let exported: Record<string, unknown>;
beforeAll(async () => {
  await installMocks();
  // The disk list is the one config the quickstart requires (quickstart-invalid.test.ts).
  pulumi.runtime.setAllConfig({ "project:diskSerials": JSON.stringify(["SN-AAA111", "SN-BBB222"]) });
  ({ recorded, exports: exported } = await runProgramDirectory(program));
});

test("the resource tree: LvmSystem, one NodeSet with one VolumeGroup and a Thin DeviceClass, Topolvm", () => {
  const components = recorded
    .filter((r) => r.type.startsWith("pulumi-lvm:index:"))
    .map((r) => [r.type, r.name, r.parent?.name]);
  expect(components).toEqual([
    ["pulumi-lvm:index:LvmSystem", "lvm", undefined],
    ["pulumi-lvm:index:NodeSet", "quickstart", undefined],
    ["pulumi-lvm:index:VolumeGroup", "quickstart-vg-data", "quickstart"],
    ["pulumi-lvm:index:DeviceClass", "quickstart-thin", "quickstart"],
    ["pulumi-lvm:index:Topolvm", "lvm-topolvm", undefined],
  ]);
  expect(find(recorded, "kubernetes:helm.sh/v4:Chart", "lvm-topolvm").inputs).toMatchObject({
    chart: "topolvm",
    version: "15.7.1",
  });
  expect(
    ofType(recorded, "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinitionPatch")
      .map((r) => r.inputs.metadata.name)
      .sort(),
  ).toEqual(["lvmnodes.lvm.topolvm.io", "lvmnodesets.lvm.topolvm.io"]);
  expect(ofType(recorded, "pulumi-nodejs:dynamic/pulumi-lvm:NodeSetDisks")).toEqual([]);
});

test("the node set is given the system: it waits for it (CRDs, agent, operator)", () => {
  const system = find(recorded, "pulumi-lvm:index:LvmSystem", "lvm");
  expect(find(recorded, "pulumi-lvm:index:NodeSet", "quickstart").opts.dependsOn).toEqual([system.resource]);
  expect(
    find(recorded, "kubernetes:lvm.topolvm.io/v2alpha1:LVMNodeSet", "quickstart").opts.dependsOn,
  ).toEqual([system.resource]);
});

test("TopoLVM waits for the node set, not the other way round (no first-up deadlock on lvmd)", () => {
  // A NodeSet waits for every child of its system. With the chart among them (LvmSystem's deprecated
  // `topolvm` arg), the first `pulumi up` would wait for lvmd Ready before the LVMNodeSet existed,
  // and lvmd cannot be Ready before the operator built the volume group the LVMNodeSet asks for.
  const nodeSet = find(recorded, "pulumi-lvm:index:NodeSet", "quickstart");
  const topolvm = find(recorded, "pulumi-lvm:index:Topolvm", "lvm-topolvm");
  expect(topolvm.opts.dependsOn).toEqual(expect.arrayContaining([nodeSet.resource]));
  const chart = find(recorded, "kubernetes:helm.sh/v4:Chart", "lvm-topolvm");
  expect(chart.parent?.name).toBe("lvm-topolvm");
  expect(
    recorded.filter((r) => r.parent?.name === "lvm" && r.type === "kubernetes:helm.sh/v4:Chart"),
  ).toEqual([]);
});

test("the LVMNodeSet spec and the classes it gets", async () => {
  expect(find(recorded, "kubernetes:lvm.topolvm.io/v2alpha1:LVMNodeSet", "quickstart").inputs.spec).toEqual({
    nodeSelector: {
      nodeSelectorTerms: [
        { matchExpressions: [{ key: "node-role.kubernetes.io/storage", operator: "In", values: ["true"] }] },
      ],
    },
    template: {
      volumeGroups: [
        {
          name: "vg-data",
          deviceSelector: {
            deviceSelectorTerms: [
              { matchExpressions: [{ key: "serial", operator: "In", values: ["SN-AAA111", "SN-BBB222"] }] },
            ],
          },
        },
      ],
      deviceClasses: [
        {
          name: "thin",
          strategy: "Thin",
          volumeGroup: "vg-data",
          default: true,
          thin: { poolName: "pool0", sizePercent: 90, overprovisionRatio: 10 },
        },
      ],
    },
  });
  expect(
    find(recorded, "kubernetes:storage.k8s.io/v1:StorageClass", "quickstart-thin-storage-class").inputs,
  ).toMatchObject({
    metadata: { name: "lvms-thin" },
    provisioner: "topolvm.io",
    parameters: { "topolvm.io/device-class": "thin", "csi.storage.k8s.io/fstype": "xfs" },
    volumeBindingMode: "WaitForFirstConsumer",
  });
  expect(
    find(
      recorded,
      "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshotClass",
      "quickstart-thin-snapshot-class",
    ).inputs,
  ).toMatchObject({
    metadata: { name: "lvms-thin" },
    driver: "topolvm.io",
  });
  expect(await outputOf(exported.storageClass as pulumi.Output<string>)).toBe("lvms-thin");
  expect(await outputOf(exported.snapshotClass as pulumi.Output<string>)).toBe("lvms-thin");
  expect(await outputOf(exported.namespace as pulumi.Output<string>)).toBe("lvm-system");
});

test("the agent runs privileged with host PID, tolerating the storage taint", () => {
  const pod = find(recorded, "kubernetes:apps/v1:DaemonSet", "lvm-agent").inputs.spec.template.spec;
  expect(pod.hostPID).toBe(true);
  expect(pod.containers[0].securityContext).toEqual({ privileged: true, runAsUser: 0 });
  expect(pod.tolerations).toEqual([
    { key: "node-role.kubernetes.io/storage", operator: "Exists", effect: "NoSchedule" },
  ]);
});

test("TopoLVM's lvmd serves the node set's thin class on the storage nodes, tolerating their taint", () => {
  const { lvmd, node, storageClasses } = find(recorded, "kubernetes:helm.sh/v4:Chart", "lvm-topolvm").inputs
    .values;
  const storageNodes = {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [
          {
            matchExpressions: [{ key: "node-role.kubernetes.io/storage", operator: "In", values: ["true"] }],
          },
        ],
      },
    },
  };
  const tolerations = [{ key: "node-role.kubernetes.io/storage", operator: "Exists", effect: "NoSchedule" }];
  expect(lvmd).toEqual({
    managed: true,
    socketName: "/run/topolvm/lvmd.sock",
    deviceClasses: [
      {
        name: "thin",
        "volume-group": "vg-data",
        default: true,
        type: "thin",
        "spare-gb": 0,
        "thin-pool": { name: "pool0", "overprovision-ratio": 10 },
      },
    ],
    nodeSelector: { "kubernetes.io/os": "linux" },
    tolerations,
    affinity: storageNodes,
    additionalConfigs: [],
  });
  expect(node).toMatchObject({ affinity: storageNodes, tolerations });
  expect(storageClasses).toEqual([]);
});
