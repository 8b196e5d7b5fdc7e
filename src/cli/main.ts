#!/usr/bin/env node
import { readFile, writeFile } from "node:fs/promises";
import { text } from "node:stream/consumers";
import { PACKAGE_VERSION } from "../version";
import { USAGE_EXIT } from "./exit-codes";
import type { CliIO, Subcommand } from "../process/subcommand";
import { catchStopSignals } from "../process/stop-signal";

/**
 * The `pulumi-lvm` binary: a dispatcher over subcommands. Each entry loads its module only when it
 * runs, so `pulumi-lvm validate` does not load the agent. Adding a subcommand is one line here:
 * its module exports `run(io)` (src/process/subcommand.ts).
 */
export interface Command {
  /** One line for the usage text. */
  readonly summary: string;
  readonly load: () => Promise<Subcommand>;
  /**
   * Runs until SIGTERM/SIGINT: main() catches them before loading the module and passes
   * `io.stopSignal` (a container's PID 1 drops signals it has no handler for; stop-signal.ts).
   */
  readonly untilStopped?: boolean;
}

export const COMMANDS: Readonly<Record<string, Command>> = {
  validate: { summary: "check LVMNodeSet and LVMNode YAML files", load: () => import("./validate") },
  convert: {
    summary: "turn LVMS LVMCluster objects (v1alpha1) into LVMNodeSets",
    load: () => import("./convert"),
  },
  inventory: {
    summary: "record this machine's disks as an inventory file for plan (reads only)",
    load: () => import("./inventory"),
  },
  plan: {
    summary: "show the per-node plan for a node set against an inventory",
    load: () => import("./plan"),
  },
  status: {
    summary: "what each node set and node's storage is now, from the cluster (through your kubeconfig)",
    load: () => import("./status"),
  },
  approve: {
    summary: "approve the plan waiting on a node, by its hash (through your kubeconfig)",
    load: () => import("./approve"),
  },
  rollout: {
    summary: "resume a node set's rollout that paused at a failed node (through your kubeconfig)",
    load: () => import("./rollout"),
  },
  "support-bundle": {
    summary: "write a redacted bundle for a bug report: objects, events, logs (through your kubeconfig)",
    load: () => import("./support-bundle"),
  },
  manifests: {
    summary: "print the objects LvmSystem deploys as plain YAML, for kubectl, Argo CD or Flux (no TopoLVM)",
    load: () => import("./manifests"),
  },
  agent: {
    summary: "run the node agent (HTTP API over lvm2 on this node)",
    load: () => import("../agent/main"),
    untilStopped: true,
  },
  operator: {
    summary: "run the operator (LVMNodeSets into LVMNodes, status, metrics)",
    load: () => import("../operator/cli"),
    untilStopped: true,
  },
};

export function usage(commands: Readonly<Record<string, Command>> = COMMANDS): string {
  const width = Math.max(...Object.keys(commands).map((name) => name.length));
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return [
    "usage: pulumi-lvm <command> [arguments]",
    "       pulumi-lvm --version",
    "",
    "commands:",
    ...lines,
    "",
    'Run "pulumi-lvm <command> --help" for its arguments.',
    "",
    "exit codes of validate, convert, inventory, plan, status and manifests: 0 all fine, 1 invalid input, 2 usage error,",
    "3 something is blocked or a node set selects no node, 4 the plan has changes (plan --detailed-exitcode)",
    "",
  ].join("\n");
}

/** Runs the command line `io.argv` (without the node and script paths); returns the exit code. */
export async function main(
  io: CliIO,
  commands: Readonly<Record<string, Command>> = COMMANDS,
): Promise<number> {
  const [name, ...rest] = io.argv;
  if (name === "--help" || name === "-h" || name === "help") {
    io.stdout(usage(commands));
    return 0;
  }
  if (name === "--version" || name === "version") {
    io.stdout(`pulumi-lvm ${PACKAGE_VERSION}\n`);
    return 0;
  }
  const command = name === undefined ? undefined : Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!command) {
    io.stderr(
      `${name === undefined ? "pulumi-lvm: no command" : `pulumi-lvm: unknown command "${name}"`}\n\n${usage(commands)}`,
    );
    return USAGE_EXIT;
  }
  // Every subcommand answers --version as the binary does (before its own flags are parsed).
  if (rest.includes("--version")) {
    io.stdout(`pulumi-lvm ${PACKAGE_VERSION}\n`);
    return 0;
  }
  const stopSignal = command.untilStopped ? (io.stopSignal ?? catchStopSignals().signal) : io.stopSignal;
  const subcommand = await command.load();
  return subcommand.run({ ...io, argv: rest, ...(stopSignal ? { stopSignal } : {}) });
}

if (require.main === module) {
  main({
    argv: process.argv.slice(2),
    readFile: (file) => readFile(file, "utf8"),
    readStdin: () => text(process.stdin),
    writeFile: (file, text) => writeFile(file, text, "utf8"),
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  }).then(
    (code) => (process.exitCode = code),
    (error: unknown) => {
      process.stderr.write(
        `pulumi-lvm: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exitCode = 1;
    },
  );
}
