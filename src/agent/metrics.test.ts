import type { NodeInventory } from "../inventory/types";
import { formatLabels } from "../metrics/prometheus";
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
  it("renders our volume groups and thin pools as gauges, counters and histograms in the text format", () => {
    const m = new AgentMetrics();
    m.commands.inc({ tool: "pvcreate", result: "ok" });
    m.commands.inc({ tool: "pvcreate", result: "ok" });
    m.commandSeconds.observe({ tool: "pvcreate" }, 0.04);
    m.commandSeconds.observe({ tool: "pvcreate" }, 3);
    const text = m.render(inventory, new Set(["vg0"]));
    expect(text).toContain('pulumi_lvm_agent_volume_group_size_bytes{vg="vg0"} 1000\n');
    expect(text).toContain('pulumi_lvm_agent_volume_group_free_bytes{vg="vg0"} 400\n');
    expect(text).not.toContain('vg="foreign"');
    expect(text).toContain('pulumi_lvm_agent_thin_pool_data_percent{vg="vg0",pool="pool0"} 12.5\n');
    expect(text).toContain('pulumi_lvm_agent_thin_pool_metadata_percent{vg="vg0",pool="pool0"} 3.25\n');
    expect(text).toContain('pulumi_lvm_agent_commands_total{tool="pvcreate",result="ok"} 2\n');
    expect(text).toContain('pulumi_lvm_agent_command_duration_seconds_bucket{tool="pvcreate",le="0.05"} 1\n');
    expect(text).toContain('pulumi_lvm_agent_command_duration_seconds_bucket{tool="pvcreate",le="+Inf"} 2\n');
    expect(text).toContain('pulumi_lvm_agent_command_duration_seconds_sum{tool="pvcreate"} 3.04\n');
    expect(text).toContain("# TYPE pulumi_lvm_agent_command_duration_seconds histogram\n");
    for (const line of text.trim().split("\n"))
      expect(line).toMatch(/^(# (HELP|TYPE) [a-z_]+ .+|[a-z_]+(\{[^}]*\})? -?[0-9.e+-]+)$/);
  });

  it("escapes label values", () => {
    expect(formatLabels({ a: 'x"y\\z\nw' })).toBe('{a="x\\"y\\\\z\\nw"}');
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
  const count = (m: AgentMetrics, line: string) => m.render(undefined, new Set()).includes(line);

  test("blkid's exit 2 (nothing found on a blank device) is its normal answer, not an error", () => {
    const m = new AgentMetrics();
    m.recordCommand(entry("blkid", 2));
    expect(count(m, 'pulumi_lvm_agent_commands_total{tool="blkid",result="ok"} 1')).toBe(true);
    expect(m.render(undefined, new Set())).not.toMatch(/pulumi_lvm_agent_errors_total\{kind="command"\}/);
  });

  test.each([
    ["blkid", 1],
    ["blkid", null],
    ["lvm", 2],
    ["wipefs", 1],
  ])("%s exiting %s is an error", (tool, code) => {
    const m = new AgentMetrics();
    m.recordCommand(entry(tool as string, code as number | null));
    expect(count(m, `pulumi_lvm_agent_commands_total{tool="${tool}",result="error"} 1`)).toBe(true);
    expect(count(m, 'pulumi_lvm_agent_errors_total{kind="command"} 1')).toBe(true);
  });
});
