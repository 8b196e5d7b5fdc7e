import { readFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import { parseLVMNodeSet } from "../api";
import { parseNodeInventory } from "../inventory/parse";
import type { RawNodeInventory } from "../inventory/types";
import { canonicalJson, planNodes, type PlanDocument } from "../planner";
import { runPlan } from "./plan";

const root = join(__dirname, "../..");
const files: Record<string, string> = {
  "inventory.json": readFileSync(join(root, "examples/sample-inventory.json"), "utf8"),
  "quickstart.yaml": readFileSync(join(root, "examples/quickstart/nodeset.yaml"), "utf8"),
  "multi.yaml": readFileSync(join(root, "examples/multi-nodeset/nodeset.yaml"), "utf8"),
};

async function run(argv: string[], extra: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const all = { ...files, ...extra };
  const code = await runPlan({
    argv,
    readFile: async (f) => {
      if (!(f in all))
        throw Object.assign(new Error(`ENOENT: no such file or directory, open '${f}'`), { code: "ENOENT" });
      return all[f]!;
    },
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
  });
  return { code, stdout: out.join(""), stderr: err.join("") };
}

test("--json prints the plan document the library makes", async () => {
  const r = await run(["--inventory", "inventory.json", "--nodeset", "quickstart.yaml", "--json"]);
  expect(r).toMatchObject({ code: 0, stderr: "" });
  const doc = JSON.parse(r.stdout) as PlanDocument;
  const nodes = (JSON.parse(files["inventory.json"]!) as { nodes: RawNodeInventory[] }).nodes.map(
    parseNodeInventory,
  );
  expect(doc).toEqual(
    JSON.parse(JSON.stringify(planNodes(nodes, parseLVMNodeSet(YAML.parse(files["quickstart.yaml"]!))))),
  );
  expect(doc.apiVersion).toBe("pulumi-lvm.dev/plan/v1");
  expect(doc.nodeSet).toBe("quickstart");
  expect(doc.nodes.map((n) => n.node)).toEqual(["edge-1", "edge-2", "edge-3"]);
  // The canonical text (keys sorted at every level, as the hashes are computed over), indented by 2.
  expect(r.stdout).toBe(`${JSON.stringify(JSON.parse(canonicalJson(doc)), null, 2)}\n`);
});

test("the text shows every node's claims, exclusions, commands and hash", async () => {
  const r = await run(["plan", "--inventory=inventory.json", "--nodeset=quickstart.yaml"]);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain(
    "node edge-1\n  volume group vg-data (new)\n    claimed:\n      /dev/loop0  4Gi  kname:/dev/loop0  joins\n",
  );
  expect(r.stdout).toContain(
    "/dev/loop2  /dev/loop2 is smaller than the minimum device size 1Gi (it has 512Mi)",
  );
  expect(r.stdout).toContain("3. vgcreate --addtag pulumi-lvm vg-data /dev/loop0 /dev/loop1\n");
  expect(r.stdout).toMatch(/\n {2}hash: [0-9a-f]{64}\n/);
  expect(r.stdout.endsWith("3 nodes, 3 selected: 3 with actions, 0 with blocked steps, 0 converged\n")).toBe(
    true,
  );
});

test("several node sets in one file plan one fleet; destructive steps are marked", async () => {
  const r = await run(["--inventory", "inventory.json", "--nodeset", "multi.yaml"]);
  // 3: vg-spare finds no usable device on edge-2 (blocked)
  expect(r.code).toBe(3);
  expect(r.stdout).toContain(
    "    - volume group vg-spare has no usable devices on this node, so it is not created\n",
  );
  expect(r.stdout).toContain("node edge-1 (node set zone-a)\n");
  expect(r.stdout).toContain("node edge-3 (node set zone-b)\n");
  expect(r.stdout).toContain("wipefs --all /dev/loop2   # DESTRUCTIVE\n");
  expect(r.stdout).toContain(
    "/dev/loop0 is a physical volume of volume group inv-fixture-edge3-data, which pulumi-lvm does not own",
  );
});

test("an invalid node set: its problems with field paths on stderr, nothing on stdout, exit 1", async () => {
  const bad = files["quickstart.yaml"]!.replace("sizePercent: 90", "sizePercent: 120").replace(
    "operator: In\n                  values: [/dev/loop0",
    "operator: Gt\n                  values: [/dev/loop0",
  );
  const r = await run(["--inventory", "inventory.json", "--nodeset", "bad.yaml"], { "bad.yaml": bad });
  expect(r.code).toBe(1);
  expect(r.stdout).toBe("");
  expect(r.stderr).toContain(
    "bad.yaml: LVMNodeSet/quickstart: spec.template.deviceClasses[0].thin.sizePercent: must be between 1 and 100 (got 120)\n",
  );
  expect(r.stderr).toMatch(
    /bad\.yaml: LVMNodeSet\/quickstart: spec\.template\.volumeGroups\[0\]\.deviceSelector\.deviceSelectorTerms\[0\]\.matchExpressions\[0\]\.operator: /,
  );
});

test.each<[string, string[], Record<string, string>, number, RegExp]>([
  ["no arguments", [], {}, 2, /--inventory is required/],
  ["no node set", ["--inventory", "inventory.json"], {}, 2, /--nodeset \(-f\) is required/],
  [
    "--json with another -o",
    ["--inventory", "inventory.json", "-f", "quickstart.yaml", "--json", "-o", "yaml"],
    {},
    2,
    /--json is -o json: give one of --json and -o yaml/,
  ],
  ["- twice", ["--inventory", "-", "-f", "-"], {}, 2, /only one file can be - \(standard input\)/],
  [
    "- without a standard input",
    ["--inventory", "inventory.json", "-f", "-"],
    {},
    1,
    /^<stdin>: cannot read it: standard input is not available\n$/,
  ],
  [
    "an unknown flag",
    ["--inventory", "inventory.json", "--nodeset", "quickstart.yaml", "--yes"],
    {},
    2,
    /unknown argument "--yes"/,
  ],
  [
    "a missing file",
    ["--inventory", "nope.json", "--nodeset", "quickstart.yaml"],
    {},
    1,
    /^nope\.json: cannot read it: no such file\n$/,
  ],
  [
    "an inventory that is not JSON",
    ["--inventory", "x.json", "--nodeset", "quickstart.yaml"],
    { "x.json": "{" },
    1,
    /^x\.json: not JSON: /,
  ],
  [
    "an inventory without nodes",
    ["--inventory", "x.json", "--nodeset", "quickstart.yaml"],
    { "x.json": "{}" },
    1,
    /expected \{"nodes": \[\.\.\.\]\}/,
  ],
  [
    "a raw inventory of the wrong shape",
    ["--inventory", "x.json", "--nodeset", "quickstart.yaml"],
    { "x.json": '{"nodes":[{"name":"n1","lsblk":{},"lvm":null,"labels":3}]}' },
    1,
    /^x\.json: node "n1": labels: /,
  ],
  [
    "no LVMNodeSet in the file",
    ["--inventory", "inventory.json", "--nodeset", "y.yaml"],
    { "y.yaml": "kind: ConfigMap\n" },
    1,
    /no LVMNodeSet document/,
  ],
  [
    "YAML that does not parse",
    ["--inventory", "inventory.json", "--nodeset", "y.yaml"],
    { "y.yaml": "a: [\n" },
    1,
    /^y\.yaml: /,
  ],
])("%s", async (_name, argv, extra, code, stderr) => {
  const r = await run(argv, extra);
  expect(r.code).toBe(code);
  expect(r.stderr).toMatch(stderr);
  expect(r.stdout).toBe("");
});

test("--help prints the usage on stdout", async () => {
  const r = await run(["--help"]);
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^usage: pulumi-lvm plan --inventory/);
});

test("an inventory recorded with the agent's plan options (inventory --agent-state-dir) plans as that agent: its lvmd.yaml counts", async () => {
  const sample = JSON.parse(files["inventory.json"]!) as { nodes: RawNodeInventory[] };
  // An agent started with --lvmd-config elsewhere: the plan writes lvmd.yaml there.
  const lvmdConfigPath = "/var/lib/topolvm/lvmd.yaml";
  const currentLvmdConfig = { "device-classes": [{ name: "old", "volume-group": "vg-old" }] };
  const recorded = {
    nodes: sample.nodes.map((n) =>
      n.name === "edge-1"
        ? { ...n, agentPlanOptions: { lvmdConfigPath, currentLvmdConfig, adoptOrphanPvs: [] } }
        : n,
    ),
  };
  const r = await run(["--inventory", "recorded.json", "--nodeset", "quickstart.yaml", "--json"], {
    "recorded.json": JSON.stringify(recorded),
  });
  expect(r).toMatchObject({ code: 0, stderr: "" });
  const nodeSet = parseLVMNodeSet(YAML.parse(files["quickstart.yaml"]!));
  const expected = planNodes(sample.nodes.map(parseNodeInventory), nodeSet, {
    optionsFor: (node) =>
      node === "edge-1" ? { lvmdConfigPath, currentLvmdConfig, adoptOrphanPvs: [] } : {},
  });
  const plain = planNodes(sample.nodes.map(parseNodeInventory), nodeSet);
  const hashes = (doc: PlanDocument) => doc.nodes.map((n) => [n.node, n.hash]);
  expect(hashes(JSON.parse(r.stdout) as PlanDocument)).toEqual(hashes(expected));
  // It is not what the same disks plan without them (edge-1's hash differs, the others' do not).
  expect(hashes(expected)[0]![1]).not.toBe(hashes(plain)[0]![1]);
  expect(hashes(expected).slice(1)).toEqual(hashes(plain).slice(1));
});

test("recorded plan options of the wrong kind: exit 1 naming the file, the node and the field", async () => {
  const sample = JSON.parse(files["inventory.json"]!) as { nodes: RawNodeInventory[] };
  const bad = {
    nodes: sample.nodes.map((n) =>
      n.name === "edge-2"
        ? { ...n, agentPlanOptions: { lvmdConfigPath: "/x", currentLvmdConfig: 5, adoptOrphanPvs: [] } }
        : n,
    ),
  };
  const r = await run(["--inventory", "bad.json", "--nodeset", "quickstart.yaml"], {
    "bad.json": JSON.stringify(bad),
  });
  expect(r.code).toBe(1);
  expect(r.stdout).toBe("");
  expect(r.stderr).toMatch(/^bad\.json: node "edge-2": agentPlanOptions\.currentLvmdConfig: /);
});

test("--html FILE writes the plan's page beside the usual output; a file that cannot be written: exit 1, no stdout", async () => {
  const written: Record<string, string> = {};
  const out: string[] = [];
  const err: string[] = [];
  const io = (argv: string[], writeFile: (f: string, t: string) => Promise<void>) => ({
    argv,
    readFile: async (f: string) => files[f]!,
    writeFile,
    stdout: (t: string) => out.push(t),
    stderr: (t: string) => err.push(t),
  });
  const argv = ["--inventory", "inventory.json", "--nodeset", "quickstart.yaml", "--html", "plan.html"];
  const code = await runPlan(io(argv, async (f, t) => void (written[f] = t)));
  expect(code).toBe(0);
  expect(out.join("")).toContain("node edge-1\n");
  expect(err.join("")).toBe(
    "pulumi-lvm plan: wrote plan.html (3 nodes; open it in a browser, it loads nothing)\n",
  );
  expect(written["plan.html"]).toContain("<title>pulumi-lvm plan: LVMNodeSet quickstart</title>");
  expect(written["plan.html"]).toMatch(
    /class="c s-joining k\d+" data-c="0" title="\/dev\/loop0: joining, 4Gi\nvg-data: joins/,
  );
  expect(written["plan.html"]).toContain(
    "/dev/loop2 is smaller than the minimum device size 1Gi (it has 512Mi)",
  );

  out.length = 0;
  err.length = 0;
  const failed = await runPlan(
    io(argv, async () => {
      throw new Error("EACCES: permission denied, open 'plan.html'");
    }),
  );
  expect({ failed, stdout: out.join(""), stderr: err.join("") }).toEqual({
    failed: 1,
    stdout: "",
    stderr: "pulumi-lvm plan: --html plan.html: EACCES: permission denied, open 'plan.html'\n",
  });
});
