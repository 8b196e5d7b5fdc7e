import { NodeSet, NODE_SET_TYPE } from "../../components/node-set";
import { ValidationError } from "../../api/errors";
import { find, installMocks, ofType, runProgram } from "../../../test/support/components/pulumi-mocks";
import { nodeSetArgsFromLvmCluster } from "./node-set-args";

const CR = "kubernetes:lvm.topolvm.io/v2alpha1:LVMNodeSet";
const SC = "kubernetes:storage.k8s.io/v1:StorageClass";
const VSC = "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshotClass";

beforeAll(installMocks);

const lvmCluster = {
  apiVersion: "lvm.topolvm.io/v1alpha1",
  kind: "LVMCluster",
  metadata: { name: "lvmcluster" },
  spec: {
    storage: {
      deviceClasses: [
        {
          name: "vg1",
          default: true,
          thinPoolConfig: { name: "thin-pool-1", sizePercent: 90, overprovisionRatio: 10 },
        },
        {
          name: "fast",
          deviceSelector: { paths: ["/dev/nvme0n1"] },
          nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: "disk", operator: "Exists" }] }] },
        },
      ],
    },
  },
};

describe("nodeSetArgsFromLvmCluster", () => {
  test("NodeSets built from its result keep LVMS's StorageClass names, each created once, the default marked", async () => {
    const { nodeSets, notConverted } = nodeSetArgsFromLvmCluster(lvmCluster);
    expect(nodeSets.map((n) => n.name)).toEqual(["lvmcluster-vg1-fast", "lvmcluster-vg1"]);
    expect(notConverted.map((n) => n.path)).toContain("spec.storage.deviceClasses[0].default");

    const recorded = await runProgram(() => nodeSets.map(({ name, args }) => new NodeSet(name, args)));
    expect(ofType(recorded, NODE_SET_TYPE).map((r) => r.name)).toEqual(nodeSets.map((n) => n.name));
    const classes = ofType(recorded, SC).map((r) => [
      (r.inputs.metadata as { name: string }).name,
      (r.inputs.metadata as { annotations?: Record<string, string> }).annotations?.[
        "storageclass.kubernetes.io/is-default-class"
      ],
      (r.inputs.parameters as Record<string, string>)["topolvm.io/device-class"],
    ]);
    // one StorageClass per LVMS class, with LVMS's names: a second one of the same name would clash
    expect(classes).toEqual([
      ["lvms-vg1", "true", "vg1"],
      ["lvms-fast", undefined, "fast"],
    ]);
    expect(ofType(recorded, VSC).map((r) => (r.inputs.metadata as { name: string }).name)).toEqual([
      "lvms-vg1",
    ]);
    const cr = find(recorded, CR, "lvmcluster-vg1");
    expect(cr.inputs.spec).toMatchObject({
      nodeSelector: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: "disk", operator: "DoesNotExist" }] }],
      },
      template: { deletionPolicy: "Retain", volumeGroups: [{ name: "vg1" }] },
    });
  });

  test("an LVMCluster it cannot convert throws a ValidationError by field path", () => {
    const broken = structuredClone(lvmCluster);
    (broken.spec.storage.deviceClasses[0]!.thinPoolConfig as Record<string, unknown>).overprovisionRatio =
      "x";
    expect(() => nodeSetArgsFromLvmCluster(broken)).toThrow(ValidationError);
    expect(() => nodeSetArgsFromLvmCluster(broken)).toThrow(
      /LVMCluster lvmcluster is invalid:\n {2}spec\.storage\.deviceClasses\[0\]\.thinPoolConfig\.overprovisionRatio: /,
    );
  });
});
