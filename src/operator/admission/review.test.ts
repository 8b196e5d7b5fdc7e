import type { LVMNodeSetObject } from "../types";
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

  test("an LVMNode without a controller is the policy's case; with one, its set is looked up by namespace and uid", async () => {
    const lvmNode = (uid?: string) => ({
      apiVersion: "lvm.topolvm.io/v2alpha1",
      kind: "LVMNode",
      metadata: {
        name: "n1",
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
      spec: { ...template, deviceClasses: [template.deviceClasses[0]] },
    });
    expect(await review(request("LVMNode", lvmNode()), unreadable)).toEqual({ allowed: true });
    const asked: string[] = [];
    const reads: AdmissionReads = {
      ...unreadable,
      nodeSet: async (ns, name) => {
        asked.push(`${ns}/${name}`);
        return { metadata: { name, namespace: ns, uid: "u-fast" } } as unknown as LVMNodeSetObject;
      },
    };
    expect(await review(request("LVMNode", lvmNode("u-fast")), reads)).toEqual({ allowed: true });
    expect(asked).toEqual(["storage/fast"]);
    expect(await review(request("LVMNode", lvmNode("u-other")), reads)).toMatchObject({
      allowed: false,
      code: 422,
    });
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
