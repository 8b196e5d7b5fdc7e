import * as os from "node:os";
import { agentPlanOptions } from "../agent/agent-service";
import { hostDiscoveryDeps, readOnlyRunner } from "../agent/discovery";
import { Journal } from "../agent/journal";
import { createLvmRunner } from "../agent/lvm-runner";
import { dnsSubdomainProblem } from "../api";
import { discoverNode, type DiscoverOptions } from "../inventory/discover";
import { parseNodeInventory } from "../inventory/parse";
import type { RawNodeInventory, RecordedPlanOptions } from "../inventory/types";
import { DEFAULT_LVMD_CONFIG_PATH } from "../planner/lvmd";
import { parseCommandLine } from "./args";
import { LvmCommandError, type CommandLogEntry } from "../agent/lvm-runner";
import { formatInventoryTable } from "./inventory-table";
import { EXIT, exitCodeHelp, USAGE_EXIT } from "./exit-codes";
import type { CliIO } from "../process/subcommand";
import { OUTPUT_FLAGS, outputFormat, toYaml, type OutputFormat } from "./output";

export const INVENTORY_USAGE = `usage: pulumi-lvm inventory [--node <name>] [--label <key>=<value>]... [--device <path>]...
                            [--agent-state-dir <dir> [--lvmd-config <file>]] [-o json|yaml|text|wide]

Records this machine's disks as the planner sees them, reading only (lsblk, wipefs --no-act, blkid -p,
lvm fullreport, sysfs, /dev links, mountinfo, swaps), and prints {"nodes": [<inventory>]}: the file
\`pulumi-lvm plan --inventory\` reads. Record each node, put their entries in one "nodes" list, and see
what a node set would do on the whole fleet before anything is applied.

  --node <name>          the node's name (default: this machine's hostname)
  --label <key>=<value>  a node label the node set's nodeSelector can match (repeatable)
  --device <path>        look only at these devices (repeatable; default: every block device)
  --agent-state-dir <dir>  also record what this node's agent plans with besides the disks (its
                         lvmd.yaml and the orphan PVs its journal in <dir> shows it created), read
                         only, so a plan made from the file is the agent's plan with the agent's hash
  --lvmd-config <file>   the agent's --lvmd-config (default ${DEFAULT_LVMD_CONFIG_PATH})
  -q, --quiet            no progress on stderr (each command run, then a summary)
  -o, --output <format>  json (default): the inventory file plan reads; yaml: the same as YAML;
                         text: a table of the devices and volume groups; wide: with serial, WWN,
                         model and /dev/disk/by-id links
  --json                 the same as -o json

Run as root: the signature probes read the devices; lvm2 must be installed. Standard output
carries only the inventory.

${exitCodeHelp(["OK", "INVALID", "USAGE"], {
  OK: "the inventory was printed",
  INVALID: "discovery failed (not root, lvm2 missing, a command failed)",
})}
`;

/** This machine cannot be discovered, for a reason said in our words (no node prefix, nothing ran). */
export class DiscoveryPrecondition extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DiscoveryPrecondition";
  }
}

export const NOT_ROOT = "run as root (it reads block devices)";
export const NO_LVM2 = "lvm2 is not installed: apt-get install lvm2 / dnf install lvm2";

/** How the command discovers a machine, telling `progress` what it does; tests pass their own. */
export type Discover = (
  options: DiscoverOptions,
  progress: (line: string) => void,
) => Promise<RawNodeInventory>;

/**
 * This machine, through the lvm runner (argv only, LC_ALL=C, timeouts), allowed to read only; each
 * command is reported to `progress` as it ends, with its exit code and duration.
 */
export const discoverThisMachine: Discover = (options, progress) => {
  if (process.geteuid?.() !== 0) return Promise.reject(new DiscoveryPrecondition(NOT_ROOT));
  return discoverNode(
    hostDiscoveryDeps(
      readOnlyRunner(
        createLvmRunner({
          ...(options.devices ? { devices: options.devices } : {}),
          log: (e) => progress(`${e.requested.join(" ")}: ${outcome(e)}, ${Math.round(e.durationMs)} ms`),
        }),
      ),
    ),
    { devicesFile: true, ...options },
  );
};

/**
 * The runner's error for an lvm command whose program does not exist (spawn ENOENT): lvm2 is not
 * installed. (Discovery means to record such a machine as lvm: null, checked after it too.)
 */
export function lvmNotFound(error: unknown): boolean {
  return (
    error instanceof LvmCommandError &&
    error.argv[0] === "lvm" &&
    error.exitCode === null &&
    /\bENOENT\b/.test(error.details.cause ?? "")
  );
}

/** How a command ended, for the progress line: a spawn failure (no such program) is not a kill. */
export function outcome(e: Pick<CommandLogEntry, "exitCode" | "signal" | "timedOut" | "aborted">): string {
  if (e.exitCode !== null) return `exit ${e.exitCode}`;
  if (e.timedOut) return "timed out";
  if (e.aborted) return "stopped";
  return e.signal ? `killed by ${e.signal}` : "did not start";
}

/** `pulumi-lvm inventory`: prints this machine's raw inventory as an inventory file. */
export async function runInventory(
  io: CliIO,
  discover: Discover = discoverThisMachine,
  clock: () => number = Date.now,
): Promise<number> {
  const args = parseArgs(io.argv, os.hostname());
  if (args.kind === "help") {
    io.stdout(INVENTORY_USAGE);
    return 0;
  }
  if (args.kind === "error") {
    io.stderr(`pulumi-lvm inventory: ${args.message}\n\n${INVENTORY_USAGE}`);
    return USAGE_EXIT;
  }
  const { node, devices } = args.options;
  const progress = args.quiet ? () => {} : (line: string) => io.stderr(`pulumi-lvm inventory: ${line}\n`);
  progress(
    `node "${node}": reading ${devices ? devices.join(", ") : "every block device"} (nothing is written)`,
  );
  const started = clock();
  let inventory: RawNodeInventory;
  try {
    inventory = await discover(args.options, progress);
  } catch (error) {
    io.stderr(
      error instanceof DiscoveryPrecondition
        ? `pulumi-lvm inventory: ${error.message}\n`
        : `pulumi-lvm inventory: node "${node}": ${lvmNotFound(error) ? NO_LVM2 : (error as Error).message}\n`,
    );
    return EXIT.INVALID;
  }
  // Discovery records a machine without lvm as having no volume groups (lvm: null); the agent cannot
  // work there, and what its disks hold of LVM would be known from signatures only.
  if (inventory.lvm === null) {
    io.stderr(`pulumi-lvm inventory: node "${node}": ${NO_LVM2}\n`);
    return EXIT.INVALID;
  }
  if (args.agent) {
    try {
      inventory = { ...inventory, agentPlanOptions: recordAgentPlanOptions(args.agent, inventory) };
    } catch (error) {
      io.stderr(
        `pulumi-lvm inventory: node "${node}": cannot read the agent's state in ${args.agent.stateDir}: ${(error as Error).message}\n`,
      );
      return EXIT.INVALID;
    }
  }
  const probed = inventory.probed?.length ?? 0;
  const missing = inventory.missingDevices?.length ?? 0;
  const unprobed = Object.keys(inventory.probeErrors ?? {}).length;
  progress(
    `node "${node}": done in ${((clock() - started) / 1000).toFixed(1)} s; ${probed} device${probed === 1 ? "" : "s"} probed${unprobed ? `, ${unprobed} could not be probed (probeErrors)` : ""}${missing ? `, ${missing} not found` : ""}`,
  );
  io.stdout(render(inventory, args.format));
  return EXIT.OK;
}

function render(inventory: RawNodeInventory, format: OutputFormat): string {
  switch (format) {
    case "json":
      return `${JSON.stringify({ nodes: [inventory] }, null, 2)}\n`;
    case "yaml":
      return toYaml({ nodes: [inventory] });
    case "text":
    case "wide":
      return formatInventoryTable(parseNodeInventory(inventory), format === "wide");
  }
}

/** The agent's plan options for this inventory, from its state directory and lvmd.yaml; writes nothing. */
function recordAgentPlanOptions(
  agent: { stateDir: string; lvmdConfigPath: string },
  inventory: RawNodeInventory,
): RecordedPlanOptions {
  const journal = new Journal({ stateDir: agent.stateDir, readOnly: true });
  const options = agentPlanOptions(agent.lvmdConfigPath, journal, parseNodeInventory(inventory));
  return {
    lvmdConfigPath: agent.lvmdConfigPath,
    currentLvmdConfig: options.currentLvmdConfig ?? null,
    adoptOrphanPvs: [...(options.adoptOrphanPvs ?? [])],
  };
}

/** The Subcommand entry point (src/cli/main.ts). */
export const run = (io: CliIO) => runInventory(io);

type Args =
  | {
      kind: "run";
      options: DiscoverOptions;
      format: OutputFormat;
      quiet?: true;
      /** --agent-state-dir (and --lvmd-config): record the agent's plan options. */
      agent?: { stateDir: string; lvmdConfigPath: string };
    }
  | { kind: "help" }
  | { kind: "error"; message: string };

export function parseArgs(argv: readonly string[], hostname: string): Args {
  const line = parseCommandLine(argv, {
    node: { type: "string" },
    label: { type: "string", multiple: true },
    device: { type: "string", multiple: true },
    quiet: { type: "boolean", short: "q" },
    "agent-state-dir": { type: "string", value: "dir" },
    "lvmd-config": { type: "string", value: "file" },
    ...OUTPUT_FLAGS,
  });
  if (line.kind !== "run") return line;
  const output = outputFormat(line.values, "json");
  if ("error" in output) return { kind: "error", message: output.error };
  const values = line.values as {
    node?: string;
    label?: string[];
    device?: string[];
    quiet?: boolean;
    "agent-state-dir"?: string;
    "lvmd-config"?: string;
  };
  const stateDir = values["agent-state-dir"];
  const lvmdConfig = values["lvmd-config"];
  if (lvmdConfig !== undefined && stateDir === undefined)
    return { kind: "error", message: "--lvmd-config needs --agent-state-dir" };
  for (const [flag, value] of [
    ["--agent-state-dir", stateDir],
    ["--lvmd-config", lvmdConfig],
  ] as const)
    if (value !== undefined && !value.startsWith("/"))
      return { kind: "error", message: `${flag} ${value}: must be an absolute path` };
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
    format: output.format,
    ...(values.quiet ? { quiet: true as const } : {}),
    ...(stateDir !== undefined
      ? { agent: { stateDir, lvmdConfigPath: lvmdConfig ?? DEFAULT_LVMD_CONFIG_PATH } }
      : {}),
    options: {
      node: name,
      ...(Object.keys(labels).length ? { labels } : {}),
      ...(devices.length ? { devices } : {}),
    },
  };
}
