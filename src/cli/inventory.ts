import * as os from "node:os";
import { hostDiscoveryDeps, readOnlyRunner } from "../agent/discovery";
import { createLvmRunner } from "../agent/lvm-runner";
import { dnsSubdomainProblem } from "../api";
import { discoverNode, type DiscoverOptions } from "../inventory/discover";
import type { RawNodeInventory } from "../inventory/types";
import { parseCommandLine } from "./args";
import { USAGE_EXIT, type CliIO } from "./io";

export const INVENTORY_USAGE = `usage: pulumi-lvm inventory [--node <name>] [--label <key>=<value>]... [--device <path>]...

Records this machine's disks as the planner sees them, reading only (lsblk, wipefs --no-act, blkid -p,
lvm fullreport, sysfs, /dev links, mountinfo, swaps), and prints {"nodes": [<inventory>]}: the file
\`pulumi-lvm plan --inventory\` reads. Record each node, put their entries in one "nodes" list, and see
what a node set would do on the whole fleet before anything is applied.

  --node <name>          the node's name (default: this machine's hostname)
  --label <key>=<value>  a node label the node set's nodeSelector can match (repeatable)
  --device <path>        look only at these devices (repeatable; default: every block device)

Run as root: the signature probes read the devices. Exit code 0 when the inventory was printed,
1 when discovery failed, 2 for bad arguments.
`;

/** How the command discovers a machine; tests pass their own. */
export type Discover = (options: DiscoverOptions) => Promise<RawNodeInventory>;

/** This machine, through the lvm runner (argv only, LC_ALL=C, timeouts), allowed to read only. */
export const discoverThisMachine: Discover = (options) =>
  discoverNode(
    hostDiscoveryDeps(readOnlyRunner(createLvmRunner(options.devices ? { devices: options.devices } : {}))),
    options,
  );

/** `pulumi-lvm inventory`: prints this machine's raw inventory as an inventory file. */
export async function runInventory(io: CliIO, discover: Discover = discoverThisMachine): Promise<number> {
  const args = parseArgs(io.argv, os.hostname());
  if (args.kind === "help") {
    io.stdout(INVENTORY_USAGE);
    return 0;
  }
  if (args.kind === "error") {
    io.stderr(`pulumi-lvm inventory: ${args.message}\n\n${INVENTORY_USAGE}`);
    return USAGE_EXIT;
  }
  let inventory: RawNodeInventory;
  try {
    inventory = await discover(args.options);
  } catch (error) {
    io.stderr(`pulumi-lvm inventory: node "${args.options.node}": ${(error as Error).message}\n`);
    return 1;
  }
  io.stdout(`${JSON.stringify({ nodes: [inventory] }, null, 2)}\n`);
  return 0;
}

/** The Subcommand entry point (src/cli/main.ts). */
export const run = (io: CliIO) => runInventory(io);

type Args = { kind: "run"; options: DiscoverOptions } | { kind: "help" } | { kind: "error"; message: string };

export function parseArgs(argv: readonly string[], hostname: string): Args {
  const line = parseCommandLine(argv, {
    node: { type: "string" },
    label: { type: "string", multiple: true },
    device: { type: "string", multiple: true },
  });
  if (line.kind !== "run") return line;
  const values = line.values as { node?: string; label?: string[]; device?: string[] };
  const node = values.node;
  const labels: Record<string, string> = {};
  const devices: string[] = [];
  for (const value of values.device ?? []) {
    if (!value.startsWith("/dev/"))
      return { kind: "error", message: `--device ${value}: must be a /dev/ path` };
    devices.push(value);
  }
  for (const value of values.label ?? []) {
    const eq = value.indexOf("=");
    if (eq <= 0) return { kind: "error", message: `--label ${value}: must be <key>=<value>` };
    labels[value.slice(0, eq)] = value.slice(eq + 1);
  }
  const name = node ?? hostname;
  const problem = dnsSubdomainProblem(name);
  if (problem)
    return {
      kind: "error",
      message: `${node === undefined ? `the hostname "${name}"` : `--node ${name}`} is not a node name: it ${problem}${node === undefined ? "; pass --node" : ""}`,
    };
  return {
    kind: "run",
    options: {
      node: name,
      ...(Object.keys(labels).length ? { labels } : {}),
      ...(devices.length ? { devices } : {}),
    },
  };
}
