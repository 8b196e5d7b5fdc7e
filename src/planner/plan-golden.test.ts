import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { parseAllDocuments } from "yaml";
import type { LVMNodeSet } from "../api";
import type { NodeInventory } from "../inventory/types";
import { parseNodeInventory } from "../inventory/parse";
import { syntheticNodeInventories } from "../inventory/synthetic";
import { BENCH_NODE_SET } from "../../test/bench/node-set";
import { planNodes, type PlanNodesOptions } from "./plan-nodes";

/**
 * Golden output: the whole plan document (every claim, exclusion reason, argv and hash) for fixed
 * inputs, pinned by the sha256 of its JSON text. A change to the planner that changes any byte of a
 * plan (or a plan's hash) fails here: a plan's hash is what the agent compares before it applies, so
 * the same input must keep giving the same hash from one version of the planner to the next. The
 * digests were recorded before the planner's performance work (issue 18) and must not change with it.
 *
 * The synthetic fleet covers blank, mounted, swap, small, read-only, removable, partitioned and
 * unprobed disks, PVs of an owned group with a thin pool and of a foreign group; the variants below add
 * members leaving their group (pvmove, vgreduce, pvremove), wipes, kname selectors with values that
 * name no device, two node sets sharing the fleet, and each node's lvmd.yaml as its agent read it.
 */

function digest(
  nodes: readonly NodeInventory[],
  sets: LVMNodeSet | LVMNodeSet[],
  options?: PlanNodesOptions,
) {
  return createHash("sha256")
    .update(JSON.stringify(planNodes(nodes, sets, options)))
    .digest("hex");
}

const template = BENCH_NODE_SET.spec.template;

/** vg-pulumi selects only its non-rotational members: rotational ones leave (pvmove/vgreduce/pvremove). */
const LEAVING: LVMNodeSet = {
  ...BENCH_NODE_SET,
  metadata: { name: "leaving" },
  spec: {
    ...BENCH_NODE_SET.spec,
    template: {
      ...template,
      volumeGroups: [
        {
          name: "vg-pulumi",
          deviceSelector: {
            deviceSelectorTerms: [
              { matchExpressions: [{ key: "rotational", operator: "In", values: ["false"] }] },
            ],
          },
        },
        { ...template.volumeGroups[1]!, forceWipeDevicesAndDestroyAllData: true },
      ],
    },
  },
};

/** Named devices (some absent on most nodes), a size bound and a wildcard with wipes. */
const NAMED: LVMNodeSet = {
  apiVersion: "lvm.topolvm.io/v2alpha1",
  kind: "LVMNodeSet",
  metadata: { name: "named" },
  spec: {
    nodeSelector: {
      nodeSelectorTerms: [
        { matchExpressions: [{ key: "topology.kubernetes.io/zone", operator: "In", values: ["zone-b"] }] },
      ],
    },
    template: {
      volumeGroups: [
        {
          name: "vg-named",
          deviceSelector: {
            deviceSelectorTerms: [
              {
                matchExpressions: [
                  { key: "kname", operator: "In", values: ["nvme0n1", "/dev/nvme1n1", "sdz", "/dev/sdc"] },
                ],
              },
              { matchExpressions: [{ key: "size", operator: "GreaterThan", values: ["7Ti"] }] },
            ],
          },
        },
        {
          name: "vg-rest",
          forceWipeDevicesAndDestroyAllData: true,
          deviceSelector: {
            deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "Any" }] }],
          },
        },
      ],
      deviceClasses: [
        { name: "named", strategy: "Thick", volumeGroup: "vg-named", default: true },
        {
          name: "rest",
          strategy: "Thin",
          volumeGroup: "vg-rest",
          thin: { poolName: "pool", sizePercent: 50, overprovisionRatio: 2 },
        },
      ],
    },
  },
};

const fleet = syntheticNodeInventories(300);

test("the bench node set over a synthetic fleet gives the recorded plans", () => {
  expect(digest(fleet, BENCH_NODE_SET)).toBe(
    "6144a510bed741423e9870f95f20d2b9cc400dab3be280badd88cfb665b2759d",
  );
});

test("other seeds and device counts give the recorded plans", () => {
  expect(digest(syntheticNodeInventories(100, { seed: 7, devicesPerNode: 9 }), BENCH_NODE_SET)).toBe(
    "c3b7bf97f5746a20524a3a9384d7e8895f0957d6044e5558b54ca260bdbbf7a3",
  );
  expect(digest(syntheticNodeInventories(60, { seed: 3, devicesPerNode: 40 }), BENCH_NODE_SET)).toBe(
    "0ecc30d821bd1d22c1e500875a85c389ab69533a4ba90be29a479c7c6c4e1387",
  );
});

test("members leaving, wipes, named devices and two node sets give the recorded plans", () => {
  expect(digest(fleet, LEAVING)).toBe("201a5f2d08c0190bc7be4fe52d32dc0792c102383b75efd15d9eff65757122b6");
  expect(digest(fleet, NAMED)).toBe("58bd3819dd28742d7253ffde9db840c91e5c15096d36d063d38e1417087a962b");
  expect(digest(fleet, [LEAVING, NAMED])).toBe(
    "b0cb7bf3ba9c32a23d0016710a3ee4f1f0621d44a2f00266d5760798741c282d",
  );
});

test("each node's lvmd.yaml as its agent read it gives the recorded plans", () => {
  const read = planNodes(fleet, BENCH_NODE_SET).nodes;
  const options: PlanNodesOptions = {
    optionsFor: (node) => {
      const i = Number(node.replace(/\D/g, ""));
      if (i % 3 === 0) return { currentLvmdConfig: null };
      if (i % 3 === 1) return { currentLvmdConfig: read[i]!.lvmd, lvmdConfigPath: "/etc/lvmd/lvmd.yaml" };
      return {};
    },
  };
  expect(digest(fleet, BENCH_NODE_SET, options)).toBe(
    "5a97a1ed59a61c9ea9bf1af708e22264ae7d3bec8dfdee4cfdbd03f700efe303",
  );
});

test("the examples' node sets over the sample inventory give the recorded plans", () => {
  const raw = JSON.parse(
    fs.readFileSync(path.join(__dirname, "../../examples/sample-inventory.json"), "utf8"),
  ) as { nodes: Parameters<typeof parseNodeInventory>[0][] };
  const nodes = raw.nodes.map(parseNodeInventory);
  const sets = (file: string) =>
    parseAllDocuments(fs.readFileSync(path.join(__dirname, "../../examples", file), "utf8")).map(
      (d) => d.toJS() as LVMNodeSet,
    );
  expect(digest(nodes, sets("quickstart/nodeset.yaml"))).toBe(
    "29038e62ab481a98d8c57f368728b064660172957e4a2206dddda6edaca0bc70",
  );
  expect(digest(nodes, sets("multi-nodeset/nodeset.yaml"))).toBe(
    "e31a63eb69e5ea16e8690a46c038ec1b4d2737693db0534c5e72c6dc21ff4fe3",
  );
});
