import * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import type { ValidationProblem } from "../api";
import { agentHostFactsOf, type AgentHost } from "./agent-host";
import { inventoryScript } from "./agent-host-script";
import { throwIfInvalid } from "./validate-args";

/** Arguments of a HostInventory. */
export interface HostInventoryArgs {
  /**
   * Any text; changing it collects the inventory again (the command is replaced). Do so when the
   * host's disks changed and the agent refused the recorded plan (PlanChanged). @default ""
   * @example "2026-11-26"
   */
  readonly revision?: string;
}

/**
 * Options, not args, as Topolvm's `system` (docs/languages.md): Pulumi's schema inference takes no
 * component class of this package as an arg, so HostInventory is TypeScript-only.
 */
export interface HostInventoryOptions extends pulumi.ComponentResourceOptions {
  /** The AgentHost whose host is read (its node, SSH connection, devices and installed release). */
  readonly host: AgentHost;
}

/**
 * The disks of one bare host as `pulumi-lvm inventory` records them (reading only), collected over
 * SSH with `command.remote.Command` after its AgentHost installed the release, for NodeSetDisks'
 * `inventories` (`inventoriesOf`): the fleet is then planned purely from these in `pulumi preview`,
 * with the agents' own hashes. The command runs once (and again when `revision` or the agent bundle
 * changes); its output is the inventory the plans are made from until then. Never runs lvm to change
 * anything: the disks change only through a plan applied by the agent.
 */
export class HostInventory extends pulumi.ComponentResource {
  /** The node name the inventory was recorded for. */
  public readonly nodeName!: pulumi.Output<string>;
  /** `pulumi-lvm inventory`'s output on the host: `{"nodes": [<raw inventory>]}` (JSON text). */
  public readonly inventory!: pulumi.Output<string>;

  constructor(name: string, args: HostInventoryArgs, opts: HostInventoryOptions) {
    const { host, ...resourceOpts } = opts ?? ({} as Partial<HostInventoryOptions>);
    const facts = validate(name, args, host);
    super(HOST_INVENTORY_TYPE, name, {}, resourceOpts);
    const read = new command.remote.Command(
      `${name}-read`,
      {
        connection: facts.connection,
        create: inventoryScript(facts.script),
        triggers: [facts.script.bundleHash, args.revision ?? ""],
        logging: "stderr",
      },
      { parent: this, dependsOn: [facts.agent] },
    );
    hostInventoryNodes.set(this, facts.node);
    this.nodeName = pulumi.output(facts.node);
    this.inventory = read.stdout;
    this.registerOutputs({ nodeName: this.nodeName, inventory: this.inventory });
  }
}

export const HOST_INVENTORY_TYPE = "pulumi-lvm:index:HostInventory";

const hostInventoryNodes = new WeakMap<HostInventory, string>();

/** NodeSetDisks' `inventories` from HostInventories: `inventories: inventoriesOf(inventories)`. */
export function inventoriesOf(inventories: readonly HostInventory[]): Record<string, pulumi.Output<string>> {
  const out: Record<string, pulumi.Output<string>> = {};
  for (const i of inventories) {
    const node = hostInventoryNodes.get(i);
    if (node === undefined) throw new Error("inventoriesOf: not a HostInventory");
    if (out[node]) throw new Error(`inventoriesOf: two HostInventories read the node "${node}"`);
    out[node] = i.inventory;
  }
  return out;
}

function validate(name: string, args: HostInventoryArgs, host: AgentHost | undefined) {
  const problems: ValidationProblem[] = [];
  const facts = agentHostFactsOf(host);
  if (!facts)
    problems.push({
      path: "opts.host",
      message:
        "must be an AgentHost made in this program (new AgentHost(...)); HostInventory is TypeScript-only (docs/languages.md)",
    });
  const revision = z.string().optional().safeParse(args?.revision);
  if (!revision.success) problems.push({ path: "args.revision", message: "must be a string" });
  throwIfInvalid("HostInventory", name, problems);
  return facts!;
}
