/**
 * `pulumi-lvm plan` as a real process: the exit-code table (docs/cli.md) row by row, several node
 * set and inventory files, standard input, --node, and the output formats. Runs src/cli/main.ts
 * through tsx (the compiled dist/src/cli/main.js is the same code); the inputs are the examples and
 * the recorded sample inventory, as the README's first command uses them.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import YAML from "yaml";

const ROOT = path.join(__dirname, "..", "..");
const TSX = path.join(ROOT, "node_modules", ".bin", "tsx");
const MAIN = path.join(ROOT, "src", "cli", "main.ts");
const INVENTORY = "examples/sample-inventory.json";
const QUICKSTART = "examples/quickstart/nodeset.yaml";
const MULTI = "examples/multi-nodeset/nodeset.yaml";

jest.setTimeout(60_000);

function cli(args: string[], input?: string) {
  if (!fs.existsSync(TSX)) throw new Error(`${TSX} is missing: run npm ci`);
  const r = spawnSync(TSX, [MAIN, ...args], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 50_000,
    ...(input !== undefined ? { input } : {}),
  });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

let dir: string;
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
};
/** A one-set file: `selector` picks nodes, one volume group takes what `devices` selects. */
const nodeSet = (
  name: string,
  selector: string,
  devices: string,
  vg = "vg-x",
) => `apiVersion: lvm.topolvm.io/v2alpha1
kind: LVMNodeSet
metadata: {name: ${name}}
spec:
  nodeSelector:
    nodeSelectorTerms: [{matchExpressions: [${selector}]}]
  template:
    volumeGroups:
      - name: ${vg}
        deviceSelector:
          deviceSelectorTerms: [{matchExpressions: [${devices}]}]
`;

let zoneA: string;
let zoneB: string;
let converged: string;
let convergedSet: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-lvm-plan-cli-"));
  // The multi-nodeset example's two sets, one file each.
  const [a, b] = fs.readFileSync(path.join(ROOT, MULTI), "utf8").split(/^---$/m);
  zoneA = file("zone-a.yaml", a!);
  zoneB = file("zone-b.yaml", b!);
  // edge-1 as it is once a set of its existing pulumi-lvm group has been applied: the PV carries its
  // kname tag and the agent's lvmd.yaml is what the plan writes. Nothing left to do.
  const sample = JSON.parse(fs.readFileSync(path.join(ROOT, INVENTORY), "utf8")) as {
    nodes: Array<{ name: string; lvm: { report: Array<{ pv?: Array<Record<string, string>> }> } }>;
  };
  const edge1 = sample.nodes.find((n) => n.name === "edge-1")!;
  for (const r of edge1.lvm.report)
    for (const pv of r.pv ?? [])
      if (pv.pv_name === "/dev/loop3") pv.pv_tags = "pulumi-lvm,pulumi-lvm.kname=loop3";
  converged = file(
    "converged.json",
    JSON.stringify({
      nodes: [
        {
          ...edge1,
          agentPlanOptions: {
            lvmdConfigPath: "/etc/topolvm/lvmd.yaml",
            currentLvmdConfig: { "socket-name": "/run/topolvm/lvmd.sock", "device-classes": [] },
            adoptOrphanPvs: [],
          },
        },
      ],
    }),
  );
  convergedSet = file(
    "converged.yaml",
    nodeSet(
      "edge1",
      "{key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}",
      "{key: kname, operator: In, values: [/dev/loop3]}",
      "inv-fixture-edge1",
    ),
  );
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("the exit-code table, row by row", () => {
  test("0: the README's first command prints the plan", () => {
    const r = cli(["plan", "--inventory", INVENTORY, "--nodeset", QUICKSTART]);
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(r.stdout).toMatch(/3 nodes, 3 selected: 3 with actions, 0 with blocked steps, 0 converged\n$/);
  });

  test("0: --detailed-exitcode and nothing to do", () => {
    const r = cli(["plan", "--inventory", converged, "--nodeset", convergedSet, "--detailed-exitcode"]);
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(r.stdout).toContain("1 node, 1 selected: 0 with actions, 0 with blocked steps, 1 converged\n");
  });

  test("4: --detailed-exitcode and the plan has changes", () => {
    const r = cli(["plan", "--inventory", INVENTORY, "--nodeset", QUICKSTART, "--detailed-exitcode"]);
    expect(r).toMatchObject({ code: 4, stderr: "" });
  });

  test("1: an invalid node set; nothing on stdout", () => {
    const bad = file(
      "bad.yaml",
      fs.readFileSync(path.join(ROOT, QUICKSTART), "utf8").replace("sizePercent: 90", "sizePercent: 120"),
    );
    const r = cli(["plan", "--inventory", INVENTORY, "--nodeset", bad]);
    expect(r).toMatchObject({ code: 1, stdout: "" });
    expect(r.stderr).toContain(
      `${bad}: LVMNodeSet/quickstart: spec.template.deviceClasses[0].thin.sizePercent: must be between 1 and 100 (got 120)\n`,
    );
  });

  test("1: two sets select the same node, refused as the admission webhook refuses the later one", () => {
    const r = cli(["plan", "--inventory", INVENTORY, "--nodeset", zoneA, "--nodeset", QUICKSTART]);
    expect(r).toMatchObject({ code: 1, stdout: "" });
    expect(r.stderr).toBe(
      `${QUICKSTART}: LVMNodeSet/quickstart: spec.nodeSelector: selects nodes edge-1 and edge-2, which LVMNodeSet default/zone-a already selects; a node belongs to at most one node set (the admission webhook refuses it)\n`,
    );
  });

  test("1: --node names no node of the inventories", () => {
    const r = cli(["plan", "--inventory", INVENTORY, "--nodeset", QUICKSTART, "--node", "edge-9"]);
    expect(r).toEqual({
      code: 1,
      stdout: "",
      stderr: "--node edge-9: no node of that name in the inventories\n",
    });
  });

  // (the other usage errors, --json with -o yaml, a missing --nodeset, are src/cli/plan.test.ts's)
  test.each([
    [
      ["plan", "--inventory", INVENTORY, "--nodeset", QUICKSTART, "-o", "xml"],
      "-o xml: must be one of text, wide, json, yaml",
    ],
    [["plan", "--inventory", "-", "-f", "-"], "only one file can be - (standard input)"],
  ])("2: a usage error: %j", (args, message) => {
    const r = cli(args);
    expect(r).toMatchObject({ code: 2, stdout: "" });
    expect(r.stderr).toContain(`pulumi-lvm plan: ${message}`);
  });

  test("3: a set selects no node (with --detailed-exitcode too), named on stderr beside the plan", () => {
    const typo = file(
      "typo.yaml",
      nodeSet(
        "typo",
        "{key: topology.kubernetes.io/zone, operator: In, values: [zone-c]}",
        "{key: kname, operator: Any}",
      ),
    );
    for (const extra of [[], ["--detailed-exitcode"]]) {
      const r = cli(["plan", "--inventory", INVENTORY, "--nodeset", typo, ...extra]);
      expect(r.code).toBe(3);
      expect(r.stdout).toContain("3 nodes, 0 selected");
      expect(r.stderr).toBe(`pulumi-lvm plan: ${typo}: LVMNodeSet/typo selects no node of the inventories\n`);
    }
  });

  test("3: a volume group is blocked; a selector value that matches nothing is named per node", () => {
    const serial = file(
      "serial.yaml",
      nodeSet(
        "serial",
        "{key: node-role.kubernetes.io/storage, operator: In, values: ['true']}",
        "{key: serial, operator: In, values: [NOPE123]}",
      ),
    );
    const r = cli(["plan", "--inventory", INVENTORY, "--nodeset", serial, "--detailed-exitcode"]);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain("volume group vg-x has no usable devices on this node, so it is not created");
    expect(r.stderr).toBe(
      ["edge-1", "edge-2", "edge-3"]
        .map(
          (n) =>
            `pulumi-lvm plan: node ${n}: volume group vg-x: serial In NOPE123 matches no device on this node (LVMNodeSet/serial: spec.template.volumeGroups[0].deviceSelector.deviceSelectorTerms[0].matchExpressions[0])\n`,
        )
        .join(""),
    );
  });
});

test("--nodeset twice plans both sets (it used to keep only the last one)", () => {
  const r = cli(["plan", "--inventory", INVENTORY, "--nodeset", zoneA, "--nodeset", zoneB]);
  // exit 3: the example's vg-spare finds no usable device on edge-2 (blocked), as with one file
  expect(r).toMatchObject({ code: 3, stderr: "" });
  expect(r.stdout).toContain("node edge-1 (node set zone-a)\n");
  expect(r.stdout).toContain("node edge-2 (node set zone-a)\n");
  expect(r.stdout).toContain("node edge-3 (node set zone-b)\n");
  // the same plan as the two sets in one file
  expect(r.stdout).toBe(cli(["plan", "--inventory", INVENTORY, "--nodeset", MULTI]).stdout);
});

test("several inventories, one from standard input, and --node: the nodes asked for, the same plan", () => {
  const sample = JSON.parse(fs.readFileSync(path.join(ROOT, INVENTORY), "utf8")) as { nodes: unknown[] };
  const first = file("first.json", JSON.stringify({ nodes: sample.nodes.slice(0, 2) }));
  const rest = JSON.stringify({ nodes: sample.nodes.slice(2) });
  const whole = JSON.parse(
    cli(["plan", "--inventory", INVENTORY, "--nodeset", QUICKSTART, "-o", "json"]).stdout,
  ) as {
    nodes: Array<{ node: string }>;
  };
  const r = cli(
    [
      "plan",
      "--inventory",
      first,
      "--inventory",
      "-",
      "--nodeset",
      QUICKSTART,
      "--node",
      "edge-3",
      "--node",
      "edge-1",
      "--json",
    ],
    rest,
  );
  expect(r).toMatchObject({ code: 0, stderr: "" });
  const doc = JSON.parse(r.stdout) as { nodes: Array<{ node: string }> };
  expect(doc.nodes).toEqual(whole.nodes.filter((n) => n.node !== "edge-2"));
});

test("a node in two inventories: exit 1 naming both files", () => {
  const r = cli(["plan", "--inventory", INVENTORY, "--inventory", converged, "--nodeset", QUICKSTART]);
  expect(r).toEqual({
    code: 1,
    stdout: "",
    stderr: `${converged}: node edge-1 is also in ${INVENTORY}; record each node once\n`,
  });
});

test("-f - reads the node sets from standard input; -o yaml is the JSON document as YAML", () => {
  const json = cli(["plan", "--inventory", INVENTORY, "--nodeset", QUICKSTART, "-o", "json"]);
  const r = cli(
    ["plan", "--inventory", INVENTORY, "-f", "-", "-o", "yaml"],
    fs.readFileSync(path.join(ROOT, QUICKSTART), "utf8"),
  );
  expect(r).toMatchObject({ code: 0, stderr: "" });
  expect(YAML.parse(r.stdout)).toEqual(JSON.parse(json.stdout));
});

test("-o wide: one line per node and device", () => {
  const r = cli(["plan", "--inventory", INVENTORY, "--nodeset", MULTI, "-o", "wide"]);
  expect(r).toMatchObject({ code: 3, stderr: "" });
  const lines = r.stdout.trimEnd().split("\n");
  expect(lines[0]).toMatch(/^NODE +NODE SET +VOLUME GROUP +DEVICE +SIZE +ID +STATE +REASON$/);
  expect(lines).toContainEqual(
    expect.stringMatching(/^edge-1 +zone-a +vg-nvme +\/dev\/loop0 +4Gi +kname:\/dev\/loop0 +joins +-$/),
  );
  expect(lines).toContainEqual(
    expect.stringMatching(
      /^edge-2 +zone-a +vg-spare +- +- +- +blocked +volume group vg-spare has no usable devices on this node, so it is not created$/,
    ),
  );
  expect(lines).toContainEqual(
    expect.stringMatching(
      /^edge-3 +zone-b +vg-archive +\/dev\/loop4 +2Gi +kname:\/dev\/loop4 +joins +wipes dos at 0x1fe: DESTRUCTIVE$/,
    ),
  );
  expect(lines).toContainEqual(
    expect.stringMatching(
      /^edge-3 +zone-b +\S+ +\/dev\/loop0 +- +- +excluded +\/dev\/loop0 is a physical volume of volume group inv-fixture-edge3-data, which pulumi-lvm does not own$/,
    ),
  );
});
