/**
 * A test fixture: a second, tiny TypeScript component provider whose one component has pulumi-lvm's
 * NodeSetDisks as its only child. It exists because a NodeSet's other children are Kubernetes
 * objects, and the Kubernetes resource plugin is not built in this tier: with it, a NodeSet cannot
 * get past the Kubernetes provider. This fixture still exercises the path that matters for
 * NodeSetDisks in another language: the dynamic resource registered from a component provider's
 * process, and its dynamic provider started by the engine in the (Python) program's directory,
 * loading pulumi-lvm's runtime from that directory's node_modules, against a real agent. Written into
 * the test's project directory (it imports "pulumi-lvm" from there), so it is kept as text here.
 */
import * as fs from "node:fs";
import * as path from "node:path";

export const FIXTURE_NAME = "pulumi-lvm-disks-fixture";

const FILES: Record<string, string> = {
  "PulumiPlugin.yaml": "runtime: nodejs\n",
  "package.json": JSON.stringify(
    { name: FIXTURE_NAME, version: "0.0.1", private: true, main: "index.ts" },
    null,
    2,
  ),
  "tsconfig.json": JSON.stringify(
    {
      compilerOptions: {
        target: "ES2022",
        module: "commonjs",
        moduleResolution: "node",
        strict: true,
        esModuleInterop: true,
        skipLibCheck: true,
      },
      files: ["index.ts"],
    },
    null,
    2,
  ),
  "index.ts": `import * as pulumi from "@pulumi/pulumi";
import { NodeSetDisks, type AgentEndpoint, type NodeResult, type NodeSetTemplate } from "pulumi-lvm";

/** Arguments of SandboxDisks. */
export interface SandboxDisksArgs {
  /** metadata.name of the node set. */
  nodeSetName: string;
  /** The template every node gets. */
  template: NodeSetTemplate;
  /** Node name → its agent. */
  agents: Record<string, AgentEndpoint>;
}

/** pulumi-lvm's NodeSetDisks (sandbox mode), alone, as a component. */
export class SandboxDisks extends pulumi.ComponentResource {
  /** Node → what its agent applied. */
  public readonly nodes: pulumi.Output<Record<string, NodeResult>>;

  constructor(name: string, args: SandboxDisksArgs, opts?: pulumi.ComponentResourceOptions) {
    super("${FIXTURE_NAME}:index:SandboxDisks", name, {}, opts);
    const disks = new NodeSetDisks(
      name + "-disks",
      // The dynamic provider's check validates the spec (as the NodeSet's own validation would).
      { nodeSetName: args.nodeSetName, namespace: "lvm-system", spec: args.template as never, agents: args.agents },
      { parent: this },
    );
    this.nodes = disks.nodes;
    this.registerOutputs({ nodes: this.nodes });
  }
}
`,
};

/** Writes the fixture into `dir` (created). */
export function writeDisksFixture(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(FILES)) fs.writeFileSync(path.join(dir, name), text);
}
