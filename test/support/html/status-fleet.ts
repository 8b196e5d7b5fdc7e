import type { LVMNodeObject, LVMNodeSetObject } from "../../../src/operator/types";

/*
 * A made-up cluster for the status page: one LVMNodeSet and `count` LVMNodes it controls, each with
 * vg-data on /dev/sdb and /dev/sdc and a thin pool, /dev/sda excluded (mounted at /). Node i has,
 * by i: (i % 7 === 3) a plan waiting for approval that wipes and adds /dev/sdd; (i % 11 === 5) a
 * blocked plan naming /dev/sdc; its use growing with i. The same count always gives the same objects.
 */
export function statusFleet(count: number): { sets: LVMNodeSetObject[]; nodes: LVMNodeObject[] } {
  const set = {
    apiVersion: "lvm.topolvm.io/v2alpha1",
    kind: "LVMNodeSet",
    metadata: { name: "edge", namespace: "lvm-system", uid: "uid-edge" },
    spec: { template: { volumeGroups: [], deviceClasses: [] } },
    status: { state: "Ready", desiredNodes: count, readyNodes: count, conditions: [] },
  } as unknown as LVMNodeSetObject;
  const nodes = Array.from({ length: count }, (_, i) => statusNode(`node-${String(i).padStart(3, "0")}`, i));
  return { sets: [set], nodes };
}

const T = "2026-12-07T00:00:00Z";

/** One LVMNode as the operator writes its status; `name` may be any text (the escaping tests use it). */
export function statusNode(name: string, i: number): LVMNodeObject {
  const waiting = i % 7 === 3;
  const blocked = i % 11 === 5;
  const conditions = [
    {
      type: "Ready",
      status: blocked ? "False" : "True",
      reason: blocked ? "PlanBlocked" : "Ready",
      lastTransitionTime: T,
    },
    ...(blocked
      ? [
          {
            type: "Reconciled",
            status: "False",
            reason: "PlanBlocked",
            lastTransitionTime: T,
            message:
              "agent pod agent-x: nothing applied, the plan is blocked: /dev/sdc left the selector of vg-data but stays: moving its extents needs 10Gi free",
          },
        ]
      : []),
  ];
  return {
    apiVersion: "lvm.topolvm.io/v2alpha1",
    kind: "LVMNode",
    metadata: {
      name,
      namespace: "lvm-system",
      ownerReferences: [
        {
          apiVersion: "lvm.topolvm.io/v2alpha1",
          kind: "LVMNodeSet",
          name: "edge",
          uid: "uid-edge",
          controller: true,
        },
      ],
    },
    spec: { nodeName: name },
    status: {
      state: blocked ? "Degraded" : waiting ? "Progressing" : "Ready",
      volumeGroups: [
        {
          name: "vg-data",
          state: "Healthy",
          size: "40Gi",
          free: `${4 + (i % 30)}Gi`,
          devices: {
            included: [
              { kname: "/dev/sdb", id: `wwn:0x5000${i}b`, size: "20Gi" },
              { kname: "/dev/sdc", id: `wwn:0x5000${i}c`, size: "20Gi" },
            ],
            excluded: [{ kname: "/dev/sda", reasons: ["/dev/sda is mounted at /"] }],
          },
          volumes: [
            { name: "pool0", size: "36Gi", dataPercent: ((i * 7) % 100).toFixed(2), metadataPercent: "3.10" },
          ],
        },
      ],
      ...(waiting
        ? {
            pendingApproval: {
              hash: "a".repeat(64),
              policy: "Destructive",
              since: T,
              steps: [
                {
                  op: "wipefs",
                  command: "wipefs --all /dev/sdd",
                  device: "/dev/sdd",
                  erases: [{ type: "ext4", offset: "0x438" }],
                  why: "erases ext4 on /dev/sdd",
                },
                {
                  op: "vgextend",
                  command: "vgextend vg-data /dev/sdd",
                  volumeGroup: "vg-data",
                  device: "/dev/sdd",
                },
              ],
              claims: ["vg-data: /dev/sdd (wwn:0x5000d)"],
            },
          }
        : {}),
      conditions,
    },
  } as unknown as LVMNodeObject;
}
