import { BLKID_NOTHING_FOUND } from "../inventory/blkid";
import type { Counter, Histogram, Registry } from "../metrics/prometheus";
import { RegistryMetrics } from "../metrics/registry-metrics";
import type { CommandLogEntry, LvmRoute } from "./lvm-runner";
import type { LvmShellObserver, ShellEnd } from "./lvm-shell";
import type { NodeInventory } from "../inventory/types";

/**
 * The agent's metrics (prom-client, one registry per process): counters and histograms it updates
 * as it works, and gauges of the volume groups and thin pools read from an inventory at scrape time.
 */
export class AgentMetrics extends RegistryMetrics {
  readonly operations: Counter<"operation" | "result">;
  readonly operationSeconds: Histogram<"operation">;
  readonly commands: Counter<"tool" | "result">;
  readonly commandSeconds: Histogram<"tool">;
  readonly requests: Counter<"route" | "method" | "code">;
  readonly errors: Counter<"kind">;
  readonly lvmCommands: Counter<"via" | "reason">;
  readonly lvmShellStarts: Counter<never>;
  readonly lvmShellEnds: Counter<"reason">;
  readonly discoveryCache: Counter<"cache" | "result">;
  /** Whether the agent's reports can go through an lvm shell now (read at scrape time). */
  private lvmShellAvailable: () => boolean = () => false;
  /** What the scrape-time gauges read: the inventory render() was given, and the spec's volume groups. */
  private scrape: { inventory: NodeInventory; own: ReadonlySet<string> } | undefined;

  constructor(registry?: Registry) {
    super(registry);
    this.inventoryGauges();
    this.operations = this.counter(
      "pulumi_lvm_agent_operations_total",
      "Applies and teardowns by result (succeeded, failed, conflict, rejected).",
      ["operation", "result"],
    );
    this.operationSeconds = this.durationHistogram(
      "pulumi_lvm_agent_operation_duration_seconds",
      "Duration of applies and teardowns.",
      ["operation"],
    );
    this.commands = this.counter(
      "pulumi_lvm_agent_commands_total",
      "Commands run (lvm, wipefs, lsblk, blkid) by tool and result.",
      ["tool", "result"],
    );
    this.commandSeconds = this.durationHistogram(
      "pulumi_lvm_agent_command_duration_seconds",
      "Duration of the commands run, by tool.",
      ["tool"],
    );
    this.requests = this.counter(
      "pulumi_lvm_agent_http_requests_total",
      "HTTP requests by route and status code.",
      ["route", "method", "code"],
    );
    this.errors = this.counter(
      "pulumi_lvm_agent_errors_total",
      "Errors by kind (command, auth, discovery, internal).",
      ["kind"],
    );
    this.lvmCommands = this.counter(
      "pulumi_lvm_agent_lvm_commands_total",
      'lvm commands by how they ran: via="shell" (answered by the agent\'s lvm shell; reason "report" or "write") or "one-shot" (a process of their own), and why one-shot (stays-one-shot, no-shell, unconfined, not-quotable, shell-busy, shell-down, exact-error, shell-died, shell-prompted).',
      ["via", "reason"],
    );
    this.lvmShellStarts = this.counter(
      "pulumi_lvm_agent_lvm_shell_starts_total",
      "lvm shells started (the first, and each restart after one ended).",
      [],
    );
    this.lvmShellEnds = this.counter(
      "pulumi_lvm_agent_lvm_shell_ends_total",
      "lvm shells that ended, by reason (timeout, aborted, died, protocol, prompt: killed at a write's question, start-failed, closed).",
      ["reason"],
    );
    this.discoveryCache = this.counter(
      "pulumi_lvm_agent_discovery_cache_lookups_total",
      'Discovery cache lookups (src/inventory/probe-cache.ts), per device and inventory: cache="signatures" (wipefs and blkid probes) or "sysfs" (static attributes), result="hit" (not probed or read again) or "miss" (probed or read: the device may have changed, or nothing was stored). Nothing counted with --no-probe-cache, nor for an apply\'s or teardown\'s discovery, which never looks.',
      ["cache", "result"],
    );
    this.scrapeGauge(
      "pulumi_lvm_agent_lvm_shell_available",
      "1 when the agent's reading lvm reports go through an lvm shell; 0 when every lvm command runs one process per command (no --lvm-sync-io, --no-lvm-shell, or the shell failed to start or answer recently).",
      [],
      () => [[{}, this.lvmShellAvailable() ? 1 : 0] as const],
    );
  }

  /** How the runner answered one lvm command (LvmRunnerOptions.routed). */
  recordLvmRoute(route: LvmRoute): void {
    this.lvmCommands.inc({ via: route.via, reason: route.via === "shell" ? route.kind : route.reason });
  }

  /** The lvm shell's starts and ends (LvmShellOptions.observer), and its availability for the gauge. */
  lvmShellObserver(available: () => boolean): LvmShellObserver {
    this.lvmShellAvailable = available;
    return {
      started: () => this.lvmShellStarts.inc(),
      ended: (why: ShellEnd) => this.lvmShellEnds.inc({ reason: why }),
    };
  }

  /**
   * Counts one command the runner ran. A tool's documented "nothing found" status is its normal
   * answer, not an error: blkid exits 2 on every blank device, so counting it would make
   * errors_total grow with each inventory of a healthy node.
   */
  recordCommand(entry: CommandLogEntry): void {
    // A shell answer the runner did not use is counted once, by the command that re-ran it.
    if (entry.rerun !== undefined) return;
    const ok = entry.exitCode === 0 || (entry.tool === "blkid" && entry.exitCode === BLKID_NOTHING_FOUND);
    this.commands.inc({ tool: entry.tool, result: ok ? "ok" : "error" });
    this.commandSeconds.observe({ tool: entry.tool }, entry.durationMs / 1000);
    if (!ok) this.errors.inc({ kind: "command" });
  }

  /**
   * The exposition text of the registry; `inventory` (when the agent could read one) gives the
   * volume group and thin pool gauges, for the groups in `ownVolumeGroups` only.
   */
  async render(inventory: NodeInventory | undefined, ownVolumeGroups: ReadonlySet<string>): Promise<string> {
    this.scrape = inventory ? { inventory, own: ownVolumeGroups } : undefined;
    return this.exposition();
  }

  private inventoryGauges(): void {
    const vgs = () =>
      this.scrape ? this.scrape.inventory.vgs.filter((vg) => this.scrape!.own.has(vg.name)) : [];
    const pools = () =>
      this.scrape
        ? this.scrape.inventory.lvs.filter((lv) => this.scrape!.own.has(lv.vgName) && lv.attr.startsWith("t"))
        : [];
    this.scrapeGauge("pulumi_lvm_agent_volume_group_size_bytes", "Size of the volume group.", ["vg"], () =>
      vgs().map((vg) => [{ vg: vg.name }, vg.size] as const),
    );
    this.scrapeGauge(
      "pulumi_lvm_agent_volume_group_free_bytes",
      "Unallocated space in the volume group.",
      ["vg"],
      () => vgs().map((vg) => [{ vg: vg.name }, vg.free] as const),
    );
    this.scrapeGauge(
      "pulumi_lvm_agent_volume_group_missing_physical_volumes",
      "Physical volumes of the volume group whose device lvm cannot find (0 when all are present).",
      ["vg"],
      () =>
        vgs().map(
          (vg) =>
            [
              { vg: vg.name },
              this.scrape!.inventory.pvs.filter((pv) => pv.vgName === vg.name && pv.missing).length,
            ] as const,
        ),
    );
    this.scrapeGauge(
      "pulumi_lvm_agent_missing_devices",
      "Devices of the agent's --devices list that do not exist on this node.",
      [],
      () => (this.scrape ? [[{}, this.scrape.inventory.missingDevices?.length ?? 0] as const] : []),
    );
    // Ratios 0-1, per Prometheus naming (lvm reports percent: data_percent, metadata_percent).
    this.scrapeGauge(
      "pulumi_lvm_agent_thin_pool_data_usage_ratio",
      "Thin pool data usage, 0 to 1 (lvm's data percent / 100).",
      ["vg", "pool"],
      () =>
        pools().flatMap((lv) =>
          lv.dataPercent === undefined
            ? []
            : [[{ vg: lv.vgName, pool: lv.name }, lv.dataPercent / 100] as const],
        ),
    );
    this.scrapeGauge(
      "pulumi_lvm_agent_thin_pool_metadata_usage_ratio",
      "Thin pool metadata usage, 0 to 1 (lvm's metadata percent / 100).",
      ["vg", "pool"],
      () =>
        pools().flatMap((lv) =>
          lv.metadataPercent === undefined
            ? []
            : [[{ vg: lv.vgName, pool: lv.name }, lv.metadataPercent / 100] as const],
        ),
    );
  }
}
