import type { LVMNodeObject, LVMNodeSetObject } from "../types";
import {
  deletionProblems,
  volumesOnSet,
  type LogicalVolumeObject,
  type PersistentVolumeObject,
} from "./in-use";

const template = (deletionPolicy?: "Retain" | "Delete") => ({
  volumeGroups: [{ name: "vg-data" }, { name: "vg-bulk" }],
  deviceClasses: [
    { name: "thin", strategy: "Thin", volumeGroup: "vg-data", default: true },
    { name: "bulk", strategy: "Thick", volumeGroup: "vg-bulk" },
  ],
  ...(deletionPolicy ? { deletionPolicy } : {}),
});

const set = (deletionPolicy?: "Retain" | "Delete", uid = "u-fast") =>
  ({
    metadata: { name: "fast", namespace: "storage", uid },
    spec: { template: template(deletionPolicy) },
  }) as unknown as LVMNodeSetObject;

const lvmNode = (name: string, uid = "u-fast", namespace = "storage") =>
  ({
    metadata: {
      name,
      namespace,
      ownerReferences: [
        { apiVersion: "lvm.topolvm.io/v2alpha1", kind: "LVMNodeSet", name: "fast", uid, controller: true },
      ],
    },
    spec: template("Delete"),
  }) as unknown as LVMNodeObject;

const lv = (
  name: string,
  nodeName: string,
  deviceClass: string,
  extra: object = {},
): LogicalVolumeObject => ({
  metadata: { name, ...extra },
  spec: { name, nodeName, deviceClass },
  status: { volumeID: `id-${name}` },
});

const pv = (name: string, phase: string, claim?: string): PersistentVolumeObject => ({
  metadata: { name },
  spec: claim ? { claimRef: { namespace: claim.split("/")[0], name: claim.split("/")[1] } } : {},
  status: { phase },
});

const nodes = [lvmNode("n1"), lvmNode("n2"), lvmNode("n3", "u-other"), lvmNode("n4", "u-fast", "elsewhere")];
const names = (xs: ReturnType<typeof volumesOnSet>) =>
  xs.map((v) => `${v.node}/${v.volumeGroup}/${v.volume.metadata.name}`);

describe("volumesOnSet: the TopoLVM volumes a deletion of the set would tear down", () => {
  test.each([
    ["Retain (explicit)", set("Retain"), [lv("pvc-a", "n1", "thin")], []],
    ["Retain (the default)", set(), [lv("pvc-a", "n1", "thin")], []],
    ["Delete, no LogicalVolume", set("Delete"), [], []],
    [
      "Delete, a LogicalVolume on a node of no LVMNode of this set",
      set("Delete"),
      [lv("pvc-a", "n9", "thin")],
      [],
    ],
    ["Delete, on a node another set's LVMNode has", set("Delete"), [lv("pvc-a", "n3", "thin")], []],
    [
      "Delete, an LVMNode of the same name in another namespace",
      set("Delete"),
      [lv("pvc-a", "n4", "thin")],
      [],
    ],
    ["Delete, a device class this set does not have", set("Delete"), [lv("pvc-a", "n1", "other")], []],
    [
      "Delete, on this node in this set's volume group",
      set("Delete"),
      [lv("pvc-a", "n1", "thin")],
      ["n1/vg-data/pvc-a"],
    ],
    [
      "Delete, TopoLVM's default class (\"\") is the set's default",
      set("Delete"),
      [lv("pvc-b", "n2", "")],
      ["n2/vg-data/pvc-b"],
    ],
    [
      "Delete, several: sorted by node, then volume group",
      set("Delete"),
      [lv("pvc-z", "n2", "thin"), lv("pvc-y", "n1", "thin"), lv("pvc-x", "n1", "bulk")],
      ["n1/vg-bulk/pvc-x", "n1/vg-data/pvc-y", "n2/vg-data/pvc-z"],
    ],
    [
      "Delete, a re-created set (another uid) owns none of the LVMNodes",
      set("Delete", "u-new"),
      [lv("pvc-a", "n1", "thin")],
      [],
    ],
  ])("%s", (_name, s, volumes, expected) => {
    expect(names(volumesOnSet(s, nodes, volumes))).toEqual(expected);
  });
});

describe("deletionProblems: one line per volume, naming node, volume group, LV, PV, claim and what to do", () => {
  const s = set("Delete");
  const again = "then destroy again (pulumi destroy, or delete LVMNodeSet storage/fast)";
  test("a bound claim: delete the PVC", () => {
    const on = volumesOnSet(s, nodes, [lv("pvc-a", "n1", "thin")]);
    expect(deletionProblems(s, on, new Map([["pvc-a", pv("pvc-a", "Bound", "default/data-web-0")]]))).toEqual(
      [
        {
          path: "spec.template.deletionPolicy",
          message: `is Delete, but volume group vg-data on node n1 still holds logical volume id-pvc-a (TopoLVM LogicalVolume pvc-a, PersistentVolume pvc-a of claim default/data-web-0): delete the PVC default/data-web-0, ${again}`,
        },
      ],
    );
  });
  test("a released PersistentVolume, a snapshot without one, a volume being deleted", () => {
    const on = volumesOnSet(s, nodes, [
      lv("pvc-r", "n1", "thin"),
      lv("snapshot-1", "n1", "thin"),
      lv("pvc-d", "n2", "thin", { deletionTimestamp: "2026-01-01T00:00:00Z" }),
    ]);
    const pvs = new Map([
      ["pvc-r", pv("pvc-r", "Released", "team/old")],
      ["pvc-d", pv("pvc-d", "Bound", "team/d")],
    ]);
    expect(deletionProblems(s, on, pvs).map((p) => p.message)).toEqual([
      `is Delete, but volume group vg-data on node n1 still holds logical volume id-pvc-r (TopoLVM LogicalVolume pvc-r, PersistentVolume pvc-r, Released, was claim team/old): delete the PersistentVolume pvc-r, ${again}`,
      `is Delete, but volume group vg-data on node n1 still holds logical volume id-snapshot-1 (TopoLVM LogicalVolume snapshot-1, no PersistentVolume): delete what uses it (a VolumeSnapshot, or the LogicalVolume), ${again}`,
      `is Delete, but volume group vg-data on node n2 still holds logical volume id-pvc-d (TopoLVM LogicalVolume pvc-d, being deleted, PersistentVolume pvc-d of claim team/d): delete the PVC team/d, ${again}`,
    ]);
  });
});
