import type { LVMNodeObject, LVMNodeSetObject } from "../types";
import { GARBAGE_COLLECTORS, LVMNODE_WRITERS_MESSAGE } from "../../agent-api/admission";
import { review, type AdmissionReads } from "./review";

const template = {
  volumeGroups: [
    {
      name: "vg1",
      deviceSelector: {
        deviceSelectorTerms: [{ matchExpressions: [{ key: "path", operator: "In", values: ["/dev/vdb"] }] }],
      },
    },
  ],
  deviceClasses: [
    { name: "a", strategy: "Thick", volumeGroup: "vg1" },
    { name: "b", strategy: "Thick", volumeGroup: "vg1" },
  ],
};
const request = (kind: string, object: unknown) => ({
  uid: "u1",
  kind: { group: "lvm.topolvm.io", version: "v2alpha1", kind },
  operation: "CREATE",
  namespace: "storage",
  object,
});
const unreadable: AdmissionReads = {
  nodeSets: () => Promise.reject(new Error("no sets")),
  nodes: () => Promise.reject(new Error("no nodes")),
  nodeSet: () => Promise.reject(new Error("no set")),
  lvmNodes: () => Promise.reject(new Error("no lvmnodes")),
  logicalVolumes: () => Promise.reject(new Error("no logicalvolumes")),
  persistentVolume: () => Promise.reject(new Error("no pv")),
  canApprove: () => Promise.reject(new Error("no access review")),
};

describe("review", () => {
  test("an invalid spec is refused with validate's lines, before the cluster is read", async () => {
    const set = {
      apiVersion: "lvm.topolvm.io/v2alpha1",
      kind: "LVMNodeSet",
      metadata: { name: "s" },
      spec: { template },
    };
    const verdict = await review(request("LVMNodeSet", set), unreadable);
    expect(verdict).toEqual({
      allowed: false,
      code: 422,
      message: expect.stringMatching(/^LVMNodeSet\/s: spec\.template\.deviceClasses\[1\]\.volumeGroup: /),
    });
  });

  test("an LVMNode written by anyone but the operator is refused, a genuine controller reference included, before any read", async () => {
    const lvmNode = (uid?: string) => ({
      apiVersion: "lvm.topolvm.io/v2alpha1",
      kind: "LVMNode",
      metadata: {
        name: "n3",
        ...(uid
          ? {
              ownerReferences: [
                {
                  apiVersion: "lvm.topolvm.io/v2alpha1",
                  kind: "LVMNodeSet",
                  name: "fast",
                  uid,
                  controller: true,
                },
              ],
            }
          : {}),
      },
      spec: { ...template, deviceClasses: [template.deviceClasses[0]], deletionPolicy: "Delete" },
    });
    const refused = {
      allowed: false,
      code: 403,
      message: `LVMNode/n3: metadata: ${LVMNODE_WRITERS_MESSAGE}`,
    };
    for (const [operation, object, username] of [
      ["CREATE", lvmNode("u-fast"), "alice"],
      ["CREATE", lvmNode(), undefined],
      ["UPDATE", lvmNode("u-fast"), "system:serviceaccount:tenant:writer"],
      // An invalid spec: who writes is judged first.
      ["CREATE", { ...lvmNode("u-fast"), spec: { ...template } }, "alice"],
    ] as const)
      expect(
        await review(
          { ...request("LVMNode", object), operation, ...(username ? { userInfo: { username } } : {}) },
          unreadable,
        ),
      ).toEqual(refused);
    // The garbage collector orphaning LVMNodes (its configuration lets it pass before the call).
    expect(
      await review(
        {
          ...request("LVMNode", lvmNode()),
          operation: "UPDATE",
          userInfo: { username: GARBAGE_COLLECTORS[0] },
        },
        unreadable,
      ),
    ).toEqual({ allowed: true });
  });

  test("an update of a set is refused only for the nodes it newly selects", async () => {
    const selecting = (name: string, roles: string[], created: string) => ({
      apiVersion: "lvm.topolvm.io/v2alpha1",
      kind: "LVMNodeSet",
      metadata: { name, namespace: name === "fast" ? "storage" : "tenant-b", creationTimestamp: created },
      spec: {
        nodeSelector: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: "role", operator: "In", values: roles }] }],
        },
        template: { ...template, deviceClasses: [template.deviceClasses[0]] },
      },
    });
    const fast = selecting("fast", ["storage"], "2044-02-01T00:00:00Z");
    const reads: AdmissionReads = {
      ...unreadable,
      nodeSets: async () => [fast as unknown as LVMNodeSetObject],
      nodes: async () => [{ metadata: { name: "n1", labels: { role: "storage" } } }],
    };
    const old = selecting("old", ["nobody"], "2044-01-01T00:00:00Z");
    const widened = selecting("old", ["storage"], "2044-01-01T00:00:00Z");
    const update = (object: unknown, oldObject: unknown) => ({
      ...request("LVMNodeSet", object),
      namespace: "tenant-b",
      operation: "UPDATE",
      oldObject,
    });
    expect(await review(update(widened, old), reads)).toMatchObject({
      allowed: false,
      code: 422,
      message:
        "LVMNodeSet/old: spec.nodeSelector: selects node n1, which LVMNodeSet storage/fast already selects; a node belongs to at most one node set",
    });
    // Already selected before the update (a Node relabelled into both): still editable.
    expect(await review(update(widened, widened), reads)).toEqual({ allowed: true });
  });

  test("a cluster that cannot be read rejects (the server answers: could not check)", async () => {
    const set = {
      apiVersion: "lvm.topolvm.io/v2alpha1",
      kind: "LVMNodeSet",
      metadata: { name: "s" },
      spec: { template: { ...template, deviceClasses: [template.deviceClasses[0]] } },
    };
    await expect(review(request("LVMNodeSet", set), unreadable)).rejects.toThrow(/no (sets|nodes)/);
  });
});

describe("review of a deletion", () => {
  const thin = { name: "thin", strategy: "Thick", volumeGroup: "vg1", default: true };
  const stored = (deletionPolicy?: string) => ({
    apiVersion: "lvm.topolvm.io/v2alpha1",
    kind: "LVMNodeSet",
    metadata: { name: "fast", namespace: "storage", uid: "u-fast" },
    // an invalid spec: a deletion is never refused for what the spec says, only for the volumes
    spec: {
      template: { ...template, deviceClasses: [thin, thin], ...(deletionPolicy ? { deletionPolicy } : {}) },
    },
  });
  const deletion = (oldObject: unknown) => ({
    uid: "u2",
    kind: { group: "lvm.topolvm.io", version: "v2alpha1", kind: "LVMNodeSet" },
    operation: "DELETE",
    namespace: "storage",
    name: "fast",
    oldObject,
  });
  const n1 = {
    metadata: {
      name: "n1",
      namespace: "storage",
      ownerReferences: [
        {
          apiVersion: "lvm.topolvm.io/v2alpha1",
          kind: "LVMNodeSet",
          name: "fast",
          uid: "u-fast",
          controller: true,
        },
      ],
    },
    spec: { ...template, deviceClasses: [thin] },
  } as unknown as LVMNodeObject;
  const reads = (volumes: unknown[] | undefined, asked: string[] = []): AdmissionReads => ({
    ...unreadable,
    lvmNodes: async (ns) => (asked.push(`lvmnodes ${ns}`), [n1]),
    logicalVolumes: async () => volumes as never,
    persistentVolume: async (name) => {
      asked.push(`pv ${name}`);
      return name === "pvc-1"
        ? ({
            metadata: { name },
            spec: { claimRef: { namespace: "default", name: "data" } },
            status: { phase: "Bound" },
          } as never)
        : undefined;
    },
  });
  const volume = {
    metadata: { name: "pvc-1" },
    spec: { name: "pvc-1", nodeName: "n1", deviceClass: "" },
    status: { volumeID: "v-1" },
  };

  test("Retain (explicit or the default): allowed without reading the cluster", async () => {
    expect(await review(deletion(stored("Retain")), unreadable)).toEqual({ allowed: true });
    expect(await review(deletion(stored()), unreadable)).toEqual({ allowed: true });
  });

  test("Delete with a volume in its volume group: refused, naming set, node, VG, LV, PV and claim; the PV read by name", async () => {
    const asked: string[] = [];
    expect(await review(deletion(stored("Delete")), reads([volume], asked))).toEqual({
      allowed: false,
      code: 422,
      message:
        "LVMNodeSet/fast: spec.template.deletionPolicy: is Delete, but volume group vg1 on node n1 still holds logical volume v-1 (TopoLVM LogicalVolume pvc-1, PersistentVolume pvc-1 of claim default/data): delete the PVC default/data, then destroy again (pulumi destroy, or delete LVMNodeSet storage/fast)",
    });
    expect(asked).toEqual(["lvmnodes storage", "pv pvc-1"]);
  });

  test("a deletion guard: the same refusal for each set it lists that exists and is not being deleted", async () => {
    const sets: Record<string, unknown> = {
      fast: stored("Delete"),
      kept: { ...stored("Retain"), metadata: { name: "kept", namespace: "storage", uid: "u-kept" } },
      going: {
        ...stored("Delete"),
        metadata: {
          name: "going",
          namespace: "storage",
          uid: "u-fast",
          deletionTimestamp: "2026-01-01T00:00:00Z",
        },
      },
    };
    const guard = {
      ...deletion({
        metadata: { name: "topolvm-deletion-guard" },
        data: { nodeSets: "fast\nkept\ngoing\nmissing" },
      }),
      kind: { group: "", version: "v1", kind: "ConfigMap" },
    };
    const asked: string[] = [];
    const verdict = await review(guard, {
      ...reads([volume], asked),
      nodeSet: async (ns, name) => (asked.push(`set ${ns}/${name}`), sets[name] as never),
    });
    expect(verdict).toMatchObject({ allowed: false, code: 422 });
    expect((verdict as { message: string }).message.split("\n")).toEqual([
      expect.stringMatching(
        /^LVMNodeSet\/fast: spec\.template\.deletionPolicy: is Delete, but volume group vg1 on node n1 /,
      ),
    ]);
    expect(asked).toEqual([
      "set storage/fast",
      "set storage/kept",
      "set storage/going",
      "set storage/missing",
      "lvmnodes storage",
      "pv pvc-1",
    ]);
    expect(await review(guard, { ...reads([]), nodeSet: async (_, name) => sets[name] as never })).toEqual({
      allowed: true,
    });
  });

  test("Delete with no volume, or TopoLVM's API absent: allowed; a cluster that cannot be read rejects", async () => {
    expect(await review(deletion(stored("Delete")), reads([]))).toEqual({ allowed: true });
    expect(await review(deletion(stored("Delete")), reads(undefined))).toEqual({ allowed: true });
    await expect(review(deletion(stored("Delete")), unreadable)).rejects.toThrow(
      /no (lvmnodes|logicalvolumes)/,
    );
  });
});
