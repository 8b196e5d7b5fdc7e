import { BLKID_NOTHING_FOUND } from "../inventory/blkid";
import { Counter, gauge, Histogram } from "../metrics/prometheus";
import type { CommandLogEntry } from "./lvm-runner";
import type { NodeInventory } from "../inventory/types";

/**
 * The agent's metrics in the Prometheus text exposition format (version 0.0.4): counters and
 * histograms it updates as it works, and gauges of the volume groups and thin pools read from an
 * inventory at scrape time.
 */
export class AgentMetrics {
  readonly operations = new Counter(
    "pulumi_lvm_agent_operations_total",
    "Applies and teardowns by result (succeeded, failed, conflict, rejected).",
  );
  readonly operationSeconds = new Histogram(
    "pulumi_lvm_agent_operation_duration_seconds",
    "Duration of applies and teardowns.",
  );
  readonly commands = new Counter(
    "pulumi_lvm_agent_commands_total",
    "Commands run (lvm, wipefs, lsblk, blkid) by tool and result.",
  );
  readonly commandSeconds = new Histogram(
    "pulumi_lvm_agent_command_duration_seconds",
    "Duration of the commands run, by tool.",
  );
  readonly requests = new Counter(
    "pulumi_lvm_agent_http_requests_total",
    "HTTP requests by route and status code.",
  );
  readonly errors = new Counter(
    "pulumi_lvm_agent_errors_total",
    "Errors by kind (command, auth, discovery, internal).",
  );

  /**
   * Counts one command the runner ran. A tool's documented "nothing found" status is its normal
   * answer, not an error: blkid exits 2 on every blank device, so counting it would make
   * errors_total grow with each inventory of a healthy node.
   */
  recordCommand(entry: CommandLogEntry): void {
    const ok = entry.exitCode === 0 || (entry.tool === "blkid" && entry.exitCode === BLKID_NOTHING_FOUND);
    this.commands.inc({ tool: entry.tool, result: ok ? "ok" : "error" });
    this.commandSeconds.observe({ tool: entry.tool }, entry.durationMs / 1000);
    if (!ok) this.errors.inc({ kind: "command" });
  }

  /** The exposition text; `inventory` (when the agent could read one) gives the volume group and thin pool gauges. */
  render(inventory: NodeInventory | undefined, ownVolumeGroups: ReadonlySet<string>): string {
    const out: string[] = [];
    if (inventory) {
      const vgs = inventory.vgs.filter((vg) => ownVolumeGroups.has(vg.name));
      gauge(
        out,
        "pulumi_lvm_agent_volume_group_size_bytes",
        "Size of the volume group.",
        vgs.map((vg) => [{ vg: vg.name }, vg.size]),
      );
      gauge(
        out,
        "pulumi_lvm_agent_volume_group_free_bytes",
        "Unallocated space in the volume group.",
        vgs.map((vg) => [{ vg: vg.name }, vg.free]),
      );
      gauge(
        out,
        "pulumi_lvm_agent_volume_group_missing_physical_volumes",
        "Physical volumes of the volume group whose device lvm cannot find (0 when all are present).",
        vgs.map((vg) => [
          { vg: vg.name },
          inventory.pvs.filter((pv) => pv.vgName === vg.name && pv.missing).length,
        ]),
      );
      gauge(
        out,
        "pulumi_lvm_agent_missing_devices",
        "Devices of the agent's --devices list that do not exist on this node.",
        [[{}, inventory.missingDevices?.length ?? 0]],
      );
      const pools = inventory.lvs.filter((lv) => ownVolumeGroups.has(lv.vgName) && lv.attr.startsWith("t"));
      gauge(
        out,
        "pulumi_lvm_agent_thin_pool_data_percent",
        "Thin pool data usage, percent.",
        pools.flatMap((lv) =>
          lv.dataPercent === undefined ? [] : [[{ vg: lv.vgName, pool: lv.name }, lv.dataPercent] as const],
        ),
      );
      gauge(
        out,
        "pulumi_lvm_agent_thin_pool_metadata_percent",
        "Thin pool metadata usage, percent.",
        pools.flatMap((lv) =>
          lv.metadataPercent === undefined
            ? []
            : [[{ vg: lv.vgName, pool: lv.name }, lv.metadataPercent] as const],
        ),
      );
    }
    for (const m of [
      this.operations,
      this.operationSeconds,
      this.commands,
      this.commandSeconds,
      this.requests,
      this.errors,
    ])
      m.render(out);
    return `${out.join("\n")}\n`;
  }
}
