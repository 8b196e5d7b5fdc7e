import { runCaptured } from "../../test/support/cli/captured-io";
import * as fs from "node:fs";
import { join } from "node:path";
import { EXAMPLE_FILES } from "../../test/api/rule-cases";
import { runPlan } from "./plan";
import { run as runValidate } from "./validate";

/** `pulumi-lvm validate` and `pulumi-lvm plan` over the same hostile or unusual manifests. */
const nodeSet = fs.readFileSync(EXAMPLE_FILES.LVMNodeSet, "utf8");
const inventory = fs.readFileSync(join(__dirname, "../../examples/sample-inventory.json"), "utf8");
const quickstart = fs.readFileSync(join(__dirname, "../../examples/quickstart/nodeset.yaml"), "utf8");

async function cli(command: "validate" | "plan", manifest: string) {
  const files: Record<string, string> = { "m.yaml": manifest, "inv.json": inventory };
  const argv =
    command === "validate" ? ["m.yaml"] : ["--inventory", "inv.json", "--nodeset", "m.yaml", "--json"];
  const r = await runCaptured(command === "validate" ? runValidate : runPlan, argv, files);
  return { ...r, text: r.stdout + r.stderr };
}

const BOMB = [
  "a: &a [x, x, x, x, x, x, x, x, x, x]",
  ...Array.from({ length: 12 }, (_, i) => {
    const prev = String.fromCharCode(97 + i);
    const next = String.fromCharCode(98 + i);
    return `${next}: &${next} [*${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}]`;
  }),
  "kind: LVMNodeSet",
  "apiVersion: lvm.topolvm.io/v2alpha1",
  "metadata: {name: bomb}",
  "spec: *m",
].join("\n");

describe.each(["validate", "plan"] as const)("%s", (command) => {
  test("a YAML alias bomb is a clear error naming the file, exit 1, no stack trace", async () => {
    const r = await cli(command, BOMB);
    expect(r.code).toBe(1);
    expect(r.text).toMatch(/^m\.yaml: document 1: .*alias/im);
    expect(r.text).not.toMatch(/\n\s+at /);
  });

  test("two LVMNodeSets with the same name: an error naming both documents", async () => {
    const r = await cli(command, `${quickstart}\n---\n${quickstart}`);
    expect(r.code).toBe(1);
    expect(r.text).toContain(
      "m.yaml: document 2: LVMNodeSet/quickstart: metadata.name: also defined by m.yaml: document 1",
    );
  });

  test("a kind: List is read item by item", async () => {
    const items = YAMLList([quickstart]);
    const r = await cli(command, items);
    expect(r.code).toBe(0);
    if (command === "plan") expect(JSON.parse(r.stdout).nodeSet).toBe("quickstart");
    const broken = await cli(command, YAMLList([nodeSet.replace(/sizePercent: \d+/, "sizePercent: 120")]));
    expect(broken.code).toBe(1);
    expect(broken.text).toContain("sizePercent: must be between 1 and 100 (got 120)");
  });
});

/** The documents as the items of a `kind: List` (the JSON form is YAML too). */
function YAMLList(docs: string[]): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const YAML = require("yaml") as typeof import("yaml");
  return YAML.stringify({ apiVersion: "v1", kind: "List", items: docs.map((d) => YAML.parse(d) as unknown) });
}
