import { lvmNodeSchema } from "./lvmnode";
import { CONDITION_MEANINGS, conditionSchema, NODE_CONDITIONS, NODESET_CONDITIONS } from "./conditions";

test.each([...NODESET_CONDITIONS, ...NODE_CONDITIONS])(
  "%s is a valid condition type with a meaning",
  (type) => {
    expect(
      conditionSchema.safeParse({ type, status: "True", lastTransitionTime: "2044-10-22T16:29:24Z" }).success,
    ).toBe(true);
    expect(CONDITION_MEANINGS[type]).toMatch(/\.$/);
  },
);

test("an LVMNode carries the operator's Reconciled next to the agent's conditions", () => {
  expect(NODE_CONDITIONS).toContain("Reconciled");
  const at = "2044-10-22T16:29:24Z";
  const node = {
    apiVersion: "lvm.topolvm.io/v2alpha1",
    kind: "LVMNode",
    metadata: { name: "n1" },
    spec: {
      volumeGroups: [
        {
          name: "vg1",
          deviceSelector: {
            deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "Any" }] }],
          },
        },
      ],
    },
    status: {
      conditions: [
        { type: "VolumeGroupsHealthy", status: "True", lastTransitionTime: at },
        {
          type: "Reconciled",
          status: "False",
          reason: "PlanBlocked",
          message: "nothing applied",
          lastTransitionTime: at,
        },
      ],
    },
  };
  expect(lvmNodeSchema.safeParse(node).error?.issues).toBeUndefined();
});
