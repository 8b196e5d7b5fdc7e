import * as fs from "node:fs/promises";
import { discoverNode } from "../inventory/discover";
import { parseNodeInventory } from "../inventory/parse";
import type { NodeInventory } from "../inventory/types";
import type { Runner } from "./lvm-runner";

export interface DiscoveryArgs {
  readonly node: string;
  /** Every command goes through the agent's runner (allow-list, filter, log). */
  readonly run: Runner;
  /** The agent's devices, when restricted. @default every device */
  readonly devices?: readonly string[];
}

/** This node's inventory, fresh each call: src/inventory's discovery through the agent's runner, parsed. */
export function createDiscovery(args: DiscoveryArgs): () => Promise<NodeInventory> {
  const deps = {
    run: (argv: readonly string[]) => args.run(argv),
    readFile: (p: string) => fs.readFile(p, "utf8").catch(() => undefined),
    readdir: (p: string) => fs.readdir(p).catch(() => undefined),
    readlink: (p: string) => fs.readlink(p).catch(() => undefined),
  };
  return async () =>
    parseNodeInventory(
      await discoverNode(deps, { node: args.node, ...(args.devices ? { devices: args.devices } : {}) }),
    );
}
