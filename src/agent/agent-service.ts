import * as fs from "node:fs";
import YAML from "yaml";
import type { LVMNodeSpec } from "../api";
import type { NodeInventory } from "../inventory/types";
import type { PlanOptions, TeardownOptions } from "../planner";
import type { LvmdConfig, NodePlan, PlanAction } from "../planner/types";
import { deviceIds } from "../planner/identity";
import { indexNode } from "../planner/node-index";
import { stateFromInventory } from "./action-checks";
import { runOperation, type OperationDeps, type OperationResult } from "./apply";
import { sha256Canonical } from "../planner/hash";
import { AgentError } from "./errors";
import type { Journal, OperationKind } from "./journal";
import { LvmCommandError, type Runner } from "./lvm-runner";
import type { AgentMetrics } from "./metrics";
import type { ApplyRequest, LastOperation, TeardownRequest } from "../agent-api/schemas";
import { buildStatus } from "./status";
import { checkNoUserVolumes, teardownVolumeGroup } from "./teardown";
import type { LVMNodeStatus } from "../api";

/** The planner's entry points, passed in (src/planner). */
export interface Planner {
  planNode(inventory: NodeInventory, spec: LVMNodeSpec, options: PlanOptions): NodePlan;
  planTeardown(inventory: NodeInventory, spec: LVMNodeSpec, options: TeardownOptions): NodePlan;
}

export interface AgentServiceDeps {
  /** This node's name. */
  readonly node: string;
  readonly run: Runner;
  /**
   * This node's inventory (lsblk, wipefs, sysfs, lvm reports through `run`); with `fresh`, nothing
   * from the discovery cache (src/inventory/probe-cache.ts): an apply's and a teardown's.
   */
  readonly discover: (call?: { fresh?: boolean }) => Promise<NodeInventory>;
  /** Told the devices of each step an operation ran (or tried to): the discovery cache forgets them. */
  readonly touched?: (devices: readonly string[]) => void;
  readonly planner: Planner;
  readonly journal: Journal;
  readonly metrics: AgentMetrics;
  /** Where lvmd.yaml is written. */
  readonly lvmdConfigPath: string;
  /** Metrics reuse an inventory at most this old instead of running lvm on every scrape. @default 15000 */
  readonly metricsMaxAgeMs?: number;
  /** @default () => new Date() */
  readonly clock?: () => Date;
  /** Filesystem seams of the identity probe. */
  readonly identity?: OperationDeps["identity"];
  /** When aborted, a running operation stops before its next step (graceful shutdown). */
  readonly stopSignal?: AbortSignal;
  /** When aborted, a running operation's command is killed (the shutdown grace ran out). */
  readonly killSignal?: AbortSignal;
  /** Test-only: awaited after each step of an operation. */
  readonly afterStep?: (index: number, action: PlanAction) => Promise<void>;
  /** The agent sees only some of the machine's devices (--devices). @default true */
  readonly confined?: boolean;
}

export interface StatusResponse {
  readonly node: string;
  readonly status: LVMNodeStatus;
  readonly lastOperation?: LastOperation;
}

/**
 * What the agent does, independent of HTTP: inventory, dry-run plans, applies and teardowns (one
 * at a time per node), status and metrics.
 */
export class AgentService {
  private running: { kind: OperationKind; since: Date } | undefined;
  private idleWaiters: Array<() => void> = [];
  private cachedInventory: { at: number; inventory: NodeInventory } | undefined;
  private discovering: { promise: Promise<NodeInventory>; operations: number } | undefined;
  /** Bumped when an operation starts and ends: an inventory taken across one is not kept. */
  private operations = 0;
  private metricsRefresh: Promise<void> | undefined;
  private lastMetricsRefresh = -Infinity;
  private readonly clock: () => Date;

  constructor(private readonly deps: AgentServiceDeps) {
    this.clock = deps.clock ?? (() => new Date());
  }

  /** True while an apply or teardown runs. */
  get busy(): boolean {
    return this.running !== undefined;
  }

  /** Resolves when no operation runs. */
  idle(): Promise<void> {
    return this.running ? new Promise((resolve) => this.idleWaiters.push(resolve)) : Promise.resolve();
  }

  /**
   * This node's inventory. Reads that arrive while one discovery runs share it (a plan and a status
   * at once run lsblk and lvm once, not twice; on a slow node each costs seconds); a `fresh` one (an
   * operation's) never joins one that may use the discovery cache, and no read joins one that
   * started before an operation began or ended (it may not show what the operation did).
   */
  async inventory(call?: { fresh?: boolean }): Promise<NodeInventory> {
    const running = this.discovering;
    if (!call?.fresh && running && running.operations === this.operations) return running.promise;
    const promise = this.discover(call);
    if (!call?.fresh) {
      const discovering = { promise, operations: this.operations };
      this.discovering = discovering;
      void promise
        .catch(() => undefined)
        .finally(() => {
          if (this.discovering === discovering) this.discovering = undefined;
        });
    }
    return promise;
  }

  private async discover(call?: { fresh?: boolean }): Promise<NodeInventory> {
    const operations = this.operations;
    try {
      const inventory = await this.deps.discover(call);
      if (operations === this.operations) this.cachedInventory = { at: this.clock().getTime(), inventory };
      return inventory;
    } catch (e) {
      this.deps.metrics.errors.inc({ kind: "discovery" });
      throw discoveryError(e);
    }
  }

  async plan(spec: LVMNodeSpec): Promise<NodePlan> {
    const inventory = await this.inventory();
    return this.deps.planner.planNode(inventory, spec, this.planOptions(inventory));
  }

  async apply(req: ApplyRequest): Promise<OperationResult> {
    return this.exclusive("apply", () =>
      this.operation({
        kind: "apply",
        spec: req.spec,
        specDigest: sha256Canonical({ spec: req.spec }),
        approvedHash: req.planHash,
        plan: (inventory) => this.deps.planner.planNode(inventory, req.spec, this.planOptions(inventory)),
      }),
    );
  }

  /** A teardown, or with dryRun its plan (after the same checks). */
  async teardown(req: TeardownRequest): Promise<OperationResult | { plan: NodePlan }> {
    const target = {
      ...(req.volumeGroup !== undefined ? { volumeGroup: req.volumeGroup } : {}),
      ...(req.deviceClass !== undefined ? { deviceClass: req.deviceClass } : {}),
      force: req.force ?? false,
    };
    const volumeGroup = teardownVolumeGroup(req.spec, target);
    const plan = (inventory: NodeInventory) =>
      this.deps.planner.planTeardown(inventory, req.spec, {
        ...(volumeGroup ? { volumeGroup } : {}),
        force: target.force,
        lvmdConfigPath: this.deps.lvmdConfigPath,
        // An apply stopped between pvcreate and vgcreate left these; nothing else removes them.
        ownOrphanPvs: adoptableOrphans(this.deps.journal, inventory),
      });
    if (req.dryRun) {
      const inventory = await this.inventory();
      checkNoUserVolumes(inventory, req.spec, target);
      return { plan: plan(inventory) };
    }
    return this.exclusive("teardown", () =>
      this.operation({
        kind: "teardown",
        spec: req.spec,
        target,
        specDigest: sha256Canonical({ spec: req.spec, target }),
        approvedHash: req.planHash,
        plan,
        precheck: (inventory) => checkNoUserVolumes(inventory, req.spec, target),
      }),
    );
  }

  async status(): Promise<StatusResponse> {
    // Never an inventory from before the call: a status tells what the node is now, a change made
    // by hand a moment ago included (a reuse of the plan's inventory hid one in the provider's tests).
    const inventory = await this.inventory();
    const last = this.deps.journal.last();
    const spec = last?.start.spec as LVMNodeSpec | undefined;
    let plan: NodePlan | undefined;
    if (spec && !(last?.start.kind === "teardown" && last.finish?.result === "succeeded")) {
      try {
        plan = this.deps.planner.planNode(inventory, spec, this.planOptions(inventory));
      } catch {
        plan = undefined;
      }
    }
    const built = buildStatus({ spec, inventory, plan, last, running: this.busy, now: this.clock() });
    return { node: this.deps.node, ...built };
  }

  /**
   * Prometheus text; volume group gauges from the last inventory. /metrics needs no authentication,
   * so a scrape never runs more than one discovery per metricsMaxAgeMs: concurrent scrapes share one
   * refresh, and a failed refresh is not retried before that interval either.
   */
  async metricsText(): Promise<string> {
    const maxAge = this.deps.metricsMaxAgeMs ?? 15_000;
    const now = this.clock().getTime();
    const fresh = this.cachedInventory && now - this.cachedInventory.at <= maxAge;
    if (!fresh && !this.metricsRefresh && now - this.lastMetricsRefresh >= maxAge) {
      this.lastMetricsRefresh = now;
      this.metricsRefresh = this.inventory().then(
        () => undefined,
        () => undefined,
      );
      void this.metricsRefresh.finally(() => (this.metricsRefresh = undefined));
    }
    if (this.metricsRefresh) await this.metricsRefresh;
    const inventory = this.cachedInventory?.inventory;
    const spec = this.deps.journal.last()?.start.spec as LVMNodeSpec | undefined;
    return this.deps.metrics.render(inventory, new Set(spec?.volumeGroups.map((v) => v.name) ?? []));
  }

  /* -------------------------------------------------------------------------- helpers ---- */

  /**
   * What the planner needs from this node besides the inventory: lvmd.yaml as it is now, where it
   * goes, and the orphan PVs this agent created itself (pvcreate done, then it stopped before the PV
   * joined its group), which may join without pvcreate or a wipe.
   */
  private planOptions(inventory: NodeInventory): PlanOptions {
    return agentPlanOptions(this.deps.lvmdConfigPath, this.deps.journal, inventory);
  }

  private async exclusive<T>(kind: OperationKind, fn: () => Promise<T>): Promise<T> {
    if (this.running)
      throw new AgentError(
        409,
        "OperationInProgress",
        `${this.running.kind} in progress on node ${this.deps.node} since ${this.running.since.toISOString()}; try again when it is done`,
      );
    this.running = { kind, since: this.clock() };
    this.operations++;
    const started = Date.now();
    let result = "failed";
    try {
      const value = await fn();
      result = "succeeded";
      return value;
    } catch (e) {
      if (e instanceof AgentError && e.status === 409) result = "conflict";
      if (e instanceof AgentError && e.status === 400) result = "rejected";
      throw e;
    } finally {
      this.deps.metrics.operations.inc({ operation: kind, result });
      this.deps.metrics.operationSeconds.observe({ operation: kind }, (Date.now() - started) / 1000);
      this.running = undefined;
      this.operations++;
      this.cachedInventory = undefined; // the operation changed the node
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  private async operation(req: Parameters<typeof runOperation>[1]): Promise<OperationResult> {
    const deps: OperationDeps = {
      run: this.deps.run,
      // The inventory a write is decided on uses nothing cached (docs/inventory.md#the-discovery-cache).
      discover: () => this.inventory({ fresh: true }),
      ...(this.deps.touched ? { touched: this.deps.touched } : {}),
      journal: this.deps.journal,
      lvmdConfigPath: this.deps.lvmdConfigPath,
      clock: this.clock,
      ...(this.deps.identity ? { identity: this.deps.identity } : {}),
      ...(this.deps.stopSignal ? { stopSignal: this.deps.stopSignal } : {}),
      ...(this.deps.killSignal ? { killSignal: this.deps.killSignal } : {}),
      ...(this.deps.afterStep ? { afterStep: this.deps.afterStep } : {}),
      ...(this.deps.confined !== undefined ? { confined: this.deps.confined } : {}),
    };
    return runOperation(deps, req);
  }
}

function discoveryError(e: unknown): AgentError {
  if (e instanceof AgentError) return e;
  if (e instanceof LvmCommandError)
    return new AgentError(500, "DiscoveryFailed", `cannot read this node's devices: ${e.message}`, {
      command: { argv: e.argv, exitCode: e.exitCode, stderr: e.stderr },
    });
  return new AgentError(
    500,
    "DiscoveryFailed",
    `cannot read this node's devices: ${e instanceof Error ? e.message : String(e)}`,
  );
}

/**
 * What an agent plans with besides the inventory: lvmd.yaml as it is now, where it goes, and the
 * orphan PVs its journal shows it created. One place for the agent and for `pulumi-lvm inventory
 * --agent-state-dir`, whose recorded inventory must plan exactly as the agent does (same hash).
 */
export function agentPlanOptions(
  lvmdConfigPath: string,
  journal: Journal,
  inventory: NodeInventory,
): PlanOptions {
  return {
    currentLvmdConfig: readLvmdConfig(lvmdConfigPath),
    lvmdConfigPath,
    adoptOrphanPvs: adoptableOrphans(journal, inventory),
  };
}

/** lvmd.yaml parsed, or null when there is none (or it is not an lvmd config: the plan then rewrites it). */
export function readLvmdConfig(file: string): LvmdConfig | null {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
  try {
    const doc = YAML.parse(text) as unknown;
    if (
      typeof doc === "object" &&
      doc !== null &&
      Array.isArray((doc as { "device-classes"?: unknown })["device-classes"])
    )
      return doc as LvmdConfig;
  } catch {
    /* not YAML: rewritten by the plan */
  }
  return null;
}

/**
 * Identities of orphan PVs now on the node that the journal shows this agent created: "pv:<uuid>",
 * and the stable (hardware or by-id) identity the device had when it was created. Never a kernel
 * name: another disk may have taken it.
 */
export function adoptableOrphans(journal: Journal, inventory: NodeInventory): string[] {
  const orphans = new Set(inventory.pvs.filter((pv) => pv.vgName === "").map((pv) => pv.uuid));
  const out = new Set<string>();
  for (const r of journal.createdPvs())
    if (orphans.has(r.pvUuid!)) {
      out.add(`pv:${r.pvUuid}`);
      if (r.deviceId && !r.deviceId.startsWith("kname:") && !r.deviceId.startsWith("pv:"))
        out.add(r.deviceId);
    }
  // The agent died between pvcreate and its journal record: the start of that pvcreate is journaled
  // (with the device's identity), its UUID is not. The orphan PV now on that device is ours when the
  // device still has the identity the step was journaled with.
  const unfinished = journal.unfinishedPvcreates();
  if (unfinished.length) {
    let ids: ReadonlyMap<string, string>;
    try {
      ids = deviceIds(indexNode(inventory));
    } catch {
      ids = new Map();
    }
    const state = stateFromInventory(inventory);
    for (const start of unfinished) {
      if (!start.device || !start.deviceId) continue;
      const kname = state.aliases.get(start.device) ?? start.device;
      const pv = inventory.pvs.find((p) => (state.aliases.get(p.device) ?? p.device) === kname);
      if (pv && pv.vgName === "" && ids.get(kname) === start.deviceId) out.add(`pv:${pv.uuid}`);
    }
  }
  return [...out].sort();
}
