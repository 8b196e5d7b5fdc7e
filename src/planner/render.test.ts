import { planNodes } from "./plan-nodes";
import { formatPlanText, shellQuote } from "./render";
import { disk, GiB, inventory, knameGroup, nodeSpec, signature } from "../../test/support/planner/testing";

test.each([
  ["/dev/sdb", "/dev/sdb"],
  ["pulumi-lvm.kname=sdb", "pulumi-lvm.kname=sdb"],
  ["90%VG", "90%VG"],
  ["/dev/disk/by-id/ata-Samsung SSD", "'/dev/disk/by-id/ata-Samsung SSD'"],
  ["it's", "'it'\\''s'"],
  ["", "''"],
])("shellQuote(%j) = %s", (arg, quoted) => {
  expect(shellQuote(arg)).toBe(quoted);
});

test("the text shows claims, exclusions with reasons, numbered commands, blocked steps and the hash", () => {
  const doc = planNodes(
    [
      inventory([disk("sdb"), disk("sdc", { signatures: [signature("xfs")] })], { node: "n1" }),
      inventory([disk("sdb", { readOnly: true })], { node: "n2" }),
    ],
    { spec: { template: nodeSpec([knameGroup("vg1", ["sdb", "sdc", "sdq"])]) } },
  );
  const text = formatPlanText(doc);
  const n1 = doc.nodes[0]!;
  expect(text).toContain(
    `node n1\n  volume group vg1 (new)\n    claimed:\n      /dev/sdb  100Gi  kname:/dev/sdb  joins\n    excluded:\n`,
  );
  expect(text).toContain(
    "      /dev/sdc  /dev/sdc has existing signature xfs, which only forceWipeDevicesAndDestroyAllData erases\n",
  );
  expect(text).toContain(
    "      sdq       /dev/sdb was found and used instead\n                sdq was not found\n",
  );
  expect(text).toContain(
    "     1. pvcreate /dev/sdb\n        initialise /dev/sdb as a physical volume for vg1\n",
  );
  expect(text).toContain(`  hash: ${n1.hash}\n`);
  expect(text).toContain(
    "  blocked:\n    - volume group vg1 has no usable devices on this node, so it is not created\n",
  );
  expect(text).toContain("2 nodes, 2 selected: 1 with actions, 1 with blocked steps, 0 converged\n");
  expect(n1.volumeGroups[0]!.claimed[0]!.size).toBe(100 * GiB);
});
