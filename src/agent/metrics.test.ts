import type { NodeInventory } from "../inventory/types";
import { processRegistry } from "../metrics/prometheus";
import { AgentMetrics } from "./metrics";

const inventory: NodeInventory = {
  node: "n",
  labels: {},
  devices: [],
  pvs: [],
  vgs: [
    {
      name: "vg0",
      uuid: "u",
      size: 1000,
      free: 400,
      extentSize: 4,
      extentCount: 250,
      freeExtentCount: 100,
      tags: ["pulumi-lvm"],
    },
    {
      name: "foreign",
      uuid: "f",
      size: 5,
      free: 5,
      extentSize: 4,
      extentCount: 1,
      freeExtentCount: 1,
      tags: [],
    },
  ],
  lvs: [
    {
      vgName: "vg0",
      name: "pool0",
      uuid: "p",
      size: 800,
      attr: "twi-aotz--",
      dataPercent: 12.5,
      metadataPercent: 3.25,
      tags: [],
    },
  ],
};

describe("AgentMetrics", () => {
  it("renders our volume groups and thin pools as gauges, counters and histograms in the text format", async () => {
    const m = new AgentMetrics();
    m.commands.inc({ tool: "pvcreate", result: "ok" });
    m.commands.inc({ tool: "pvcreate", result: "ok" });
    m.commandSeconds.observe({ tool: "pvcreate" }, 0.04);
    m.commandSeconds.observe({ tool: "pvcreate" }, 3);
    const text = await m.render(inventory, new Set(["vg0"]));
    expect(text).toContain('pulumi_lvm_agent_volume_group_size_bytes{vg="vg0"} 1000\n');
    expect(text).toContain('pulumi_lvm_agent_volume_group_free_bytes{vg="vg0"} 400\n');
    expect(text).not.toContain('vg="foreign"');
    // lvm's 12.5 and 3.25 percent as ratios 0-1 (Prometheus naming: _ratio, not _percent)
    expect(text).toContain('pulumi_lvm_agent_thin_pool_data_usage_ratio{vg="vg0",pool="pool0"} 0.125\n');
    expect(text).toContain('pulumi_lvm_agent_thin_pool_metadata_usage_ratio{vg="vg0",pool="pool0"} 0.0325\n');
    expect(text).not.toContain("_percent");
    expect(text).toContain('pulumi_lvm_agent_commands_total{tool="pvcreate",result="ok"} 2\n');
    // prom-client writes a bucket's `le` first (label order carries no meaning in the text format)
    expect(text).toContain('pulumi_lvm_agent_command_duration_seconds_bucket{le="0.05",tool="pvcreate"} 1\n');
    expect(text).toContain('pulumi_lvm_agent_command_duration_seconds_bucket{le="+Inf",tool="pvcreate"} 2\n');
    expect(text).toContain('pulumi_lvm_agent_command_duration_seconds_sum{tool="pvcreate"} 3.04\n');
    expect(text).toContain("# TYPE pulumi_lvm_agent_command_duration_seconds histogram\n");
    // prom-client separates metric families with a blank line (valid in the text format)
    for (const line of text
      .trim()
      .split("\n")
      .filter((l) => l !== ""))
      expect(line).toMatch(/^(# (HELP|TYPE) [a-z_]+ .+|[a-z_]+(\{[^}]*\})? -?[0-9.e+-]+)$/);
  });

  it("escapes label values", async () => {
    const m = new AgentMetrics();
    m.commands.inc({ tool: 'x"y\\z\nw', result: "ok" });
    expect(await m.render(undefined, new Set())).toContain(
      'pulumi_lvm_agent_commands_total{tool="x\\"y\\\\z\\nw",result="ok"} 1\n',
    );
  });

  it("without an inventory: no volume group, thin pool or missing-device samples (unknown is not 0)", async () => {
    const text = await new AgentMetrics().render(undefined, new Set(["vg0"]));
    expect(text).toContain("# TYPE pulumi_lvm_agent_missing_devices gauge\n");
    expect(text).not.toMatch(/^pulumi_lvm_agent_(missing_devices|volume_group_\w+|thin_pool_\w+)[{ ]/m);
    const withInventory = await new AgentMetrics().render(inventory, new Set(["vg0"]));
    expect(withInventory).toContain("\npulumi_lvm_agent_missing_devices 0\n");
  });

  it("each AgentMetrics has its own registry: counts do not leak between instances", async () => {
    const a = new AgentMetrics();
    a.errors.inc({ kind: "auth" });
    expect(await new AgentMetrics().render(undefined, new Set())).not.toContain('kind="auth"');
  });

  it("the process registry adds prom-client's process and Node.js runtime metrics", async () => {
    const text = await new AgentMetrics(processRegistry()).render(undefined, new Set());
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d+/m);
    expect(text).toContain("# TYPE pulumi_lvm_agent_commands_total counter");
  });
});

describe("recordCommand: a command's result as the metrics count it", () => {
  const entry = (tool: string, exitCode: number | null) => ({
    tool,
    argv: [tool, "/dev/sdb"],
    requested: [tool, "/dev/sdb"],
    startedAt: "2026-01-01T00:00:00.000Z",
    durationMs: 5,
    exitCode,
  });
  const count = async (m: AgentMetrics, line: string) =>
    (await m.render(undefined, new Set())).includes(line);

  test("blkid's exit 2 (nothing found on a blank device) is its normal answer, not an error", async () => {
    const m = new AgentMetrics();
    m.recordCommand(entry("blkid", 2));
    expect(await count(m, 'pulumi_lvm_agent_commands_total{tool="blkid",result="ok"} 1')).toBe(true);
    expect(await m.render(undefined, new Set())).not.toMatch(
      /pulumi_lvm_agent_errors_total\{kind="command"\}/,
    );
  });

  test.each([
    ["blkid", 1],
    ["blkid", null],
    ["lvm", 2],
    ["wipefs", 1],
  ])("%s exiting %s is an error", async (tool, code) => {
    const m = new AgentMetrics();
    m.recordCommand(entry(tool as string, code as number | null));
    expect(await count(m, `pulumi_lvm_agent_commands_total{tool="${tool}",result="error"} 1`)).toBe(true);
    expect(await count(m, 'pulumi_lvm_agent_errors_total{kind="command"} 1')).toBe(true);
  });
});
