import { runCaptured } from "../../test/support/cli/captured-io";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { loadRawFixture } from "../../test/fixtures/inventory/load";
import { JOURNAL_FILE } from "../agent/journal";
import { LvmCommandError } from "../agent/lvm-runner";
import type { DiscoverOptions } from "../inventory/discover";
import YAML from "yaml";
import {
  DiscoveryPrecondition,
  discoverThisMachine,
  INVENTORY_USAGE,
  lvmNotFound,
  outcome,
  parseArgs,
  runInventory,
  type Discover,
} from "./inventory";

const cli = (argv: string[], discover: Discover, clock?: () => number) =>
  runCaptured((io) => runInventory(io, discover, clock), argv);

describe("pulumi-lvm inventory", () => {
  const recorded = loadRawFixture("host-loop-mixed-paths");

  it("prints the machine's raw inventory as an inventory file, with the node name and labels asked for", async () => {
    const asked: DiscoverOptions[] = [];
    const r = await cli(
      ["--node", "edge-1", "--label", "zone=a", "--label=role=storage", "--device", "/dev/sdb"],
      async (options, progress) => {
        asked.push(options);
        progress("lsblk --json /dev/sdb: exit 0, 4 ms");
        return { ...recorded, name: options.node, labels: options.labels };
      },
      ticks(0, 1250),
    );
    // progress on stderr (what is read, each command, a summary); stdout stays the JSON alone
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(
      [
        'pulumi-lvm inventory: node "edge-1": reading /dev/sdb (nothing is written)',
        "pulumi-lvm inventory: lsblk --json /dev/sdb: exit 0, 4 ms",
        `pulumi-lvm inventory: node "edge-1": done in 1.3 s; ${recorded.probed!.length} devices probed`,
        "",
      ].join("\n"),
    );
    expect(asked).toEqual([
      { node: "edge-1", labels: { zone: "a", role: "storage" }, devices: ["/dev/sdb"] },
    ]);
    expect(JSON.parse(r.stdout)).toEqual({
      nodes: [{ ...recorded, name: "edge-1", labels: { zone: "a", role: "storage" } }],
    });
  });

  it("the summary counts devices that could not be probed and devices not found", async () => {
    const r = await cli(["--node", "edge-1"], async (options) => ({
      ...recorded,
      name: options.node,
      probed: ["/dev/sdb"],
      probeErrors: { "/dev/vda": "wipefs: exit 1" },
      missingDevices: ["/dev/sdz", "/dev/sdy"],
    }));
    expect(r.stderr.trimEnd().split("\n").at(-1)).toMatch(
      /: node "edge-1": done in [\d.]+ s; 1 device probed, 1 could not be probed \(probeErrors\), 2 not found$/,
    );
  });

  it("--quiet: no progress, the same JSON", async () => {
    const discover: Discover = async (options, progress) => {
      progress("lsblk: exit 0, 1 ms");
      return { ...recorded, name: options.node };
    };
    const quiet = await cli(["--node", "edge-1", "-q"], discover);
    expect(quiet).toMatchObject({ code: 0, stderr: "" });
    expect(quiet.stdout).toBe((await cli(["--node", "edge-1"], discover)).stdout);
  });

  it("names the node in a discovery failure and prints nothing on stdout", async () => {
    const r = await cli(["--node", "edge-1"], () =>
      Promise.reject(new Error("lsblk --json --bytes --output-all --paths: exit 32: lsblk: failed")),
    );
    expect(r).toEqual({
      code: 1,
      stdout: "",
      stderr:
        'pulumi-lvm inventory: node "edge-1": reading every block device (nothing is written)\n' +
        'pulumi-lvm inventory: node "edge-1": lsblk --json --bytes --output-all --paths: exit 32: lsblk: failed\n',
    });
  });

  it("lvm2 not installed (discovery records lvm: null): exit 1 saying how to install it, nothing on stdout", async () => {
    const r = await cli(["--node", "edge-1", "-q"], async (options) => ({
      ...recorded,
      name: options.node,
      lvm: null,
    }));
    expect(r).toEqual({
      code: 1,
      stdout: "",
      stderr:
        'pulumi-lvm inventory: node "edge-1": lvm2 is not installed: apt-get install lvm2 / dnf install lvm2\n',
    });
  });

  it("lvm2 not installed (the runner cannot start lvm: spawn ENOENT): the same words", async () => {
    const r = await cli(["--node", "edge-1", "-q"], () =>
      Promise.reject(
        new LvmCommandError(["lvm", "fullreport", "--reportformat", "json"], null, "", {
          cause: "spawn lvm ENOENT",
        }),
      ),
    );
    expect(r).toEqual({
      code: 1,
      stdout: "",
      stderr:
        'pulumi-lvm inventory: node "edge-1": lvm2 is not installed: apt-get install lvm2 / dnf install lvm2\n',
    });
    // another program missing, or lvm failing otherwise, is said as it is
    expect(lvmNotFound(new LvmCommandError(["wipefs"], null, "", { cause: "spawn wipefs ENOENT" }))).toBe(
      false,
    );
    expect(lvmNotFound(new LvmCommandError(["lvm", "fullreport"], 5, "Permission denied"))).toBe(false);
  });

  it("a precondition of discovery (not root) is said alone, without the node", async () => {
    const r = await cli(["--node", "edge-1", "-q"], () =>
      Promise.reject(new DiscoveryPrecondition("run as root (it reads block devices)")),
    );
    expect(r).toEqual({
      code: 1,
      stdout: "",
      stderr: "pulumi-lvm inventory: run as root (it reads block devices)\n",
    });
  });

  it("this machine, not as root: refused before any command runs", async () => {
    const geteuid = jest.spyOn(process, "geteuid").mockReturnValue(1000);
    try {
      const progress: string[] = [];
      await expect(discoverThisMachine({ node: "edge-1" }, (l) => progress.push(l))).rejects.toThrow(
        new DiscoveryPrecondition("run as root (it reads block devices)"),
      );
      expect(progress).toEqual([]);
    } finally {
      geteuid.mockRestore();
    }
  });

  it.each([
    [{ exitCode: 5 }, "exit 5"],
    [{ exitCode: null }, "did not start"],
    [{ exitCode: null, signal: "SIGKILL" }, "killed by SIGKILL"],
    [{ exitCode: null, signal: "SIGTERM", timedOut: true }, "timed out"],
  ])("a command that ended %j is reported as %s", (entry, text) => {
    expect(outcome(entry)).toBe(text);
  });

  it("-o yaml is the same inventory; -o text and wide are tables of the devices and volume groups", async () => {
    const discover: Discover = async (options) => ({ ...recorded, name: options.node });
    const json = JSON.parse((await cli(["--node", "edge-1", "-q"], discover)).stdout) as unknown;
    const yaml = await cli(["--node", "edge-1", "-q", "-o", "yaml"], discover);
    expect(yaml.code).toBe(0);
    expect(YAML.parse(yaml.stdout)).toEqual(json);
    const text = await cli(["--node", "edge-1", "-q", "-o", "text"], discover);
    expect(text.code).toBe(0);
    const lines = text.stdout.split("\n");
    expect(lines[0]).toBe("node edge-1");
    expect(lines[1]).toMatch(/^DEVICE +TYPE +SIZE +IN USE$/);
    const wide = await cli(["--node", "edge-1", "-q", "-o", "wide"], discover);
    expect(wide.stdout.split("\n")[1]).toMatch(/^DEVICE +TYPE +SIZE +IN USE +SERIAL +WWN +MODEL +BY-ID$/);
    expect(wide.stdout.split("\n").length).toBe(lines.length);
  });

  it.each([
    [["--bogus"], 'unknown argument "--bogus"'],
    [["--node"], "--node needs a value"],
    [["--label", "zone"], "--label zone: must be <key>=<value>"],
    [["--label", "=a"], "--label =a: must be <key>=<value>"],
    [["--device", "sdb"], "--device sdb: must be a /dev/ path"],
    [["-o", "table"], "-o table: must be one of text, wide, json, yaml"],
    [["--node", "Edge_1"], "--node Edge_1 is not a node name: it "],
    [["--agent-state-dir", "state"], "--agent-state-dir state: must be an absolute path"],
    [["--lvmd-config", "/etc/topolvm/lvmd.yaml"], "--lvmd-config needs --agent-state-dir"],
    [
      ["--agent-state-dir", "/s", "--lvmd-config", "lvmd.yaml"],
      "--lvmd-config lvmd.yaml: must be an absolute path",
    ],
  ])("%j: exit 2, the problem and the usage, discovery never runs", async (argv, message) => {
    const r = await cli(argv, () => Promise.reject(new Error("must not run")));
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`pulumi-lvm inventory: ${message}`);
    expect(r.stderr.endsWith(INVENTORY_USAGE)).toBe(true);
  });

  it("--help prints the usage", async () => {
    expect(await cli(["--help"], () => Promise.reject(new Error("must not run")))).toEqual({
      code: 0,
      stdout: INVENTORY_USAGE,
      stderr: "",
    });
  });
});

/** A clock answering these times in turn. */
function ticks(...times: number[]): () => number {
  return () => times.shift() ?? 0;
}

describe("parseArgs", () => {
  it("defaults the node name to the hostname", () => {
    expect(parseArgs([], "edge-7")).toEqual({ kind: "run", format: "json", options: { node: "edge-7" } });
  });

  it("asks for --node when the hostname is not a node name", () => {
    expect(parseArgs([], "EDGE_7")).toMatchObject({
      kind: "error",
      message: expect.stringMatching(/^the hostname "EDGE_7" is not a node name: it .*; pass --node$/),
    });
  });
});

describe("--agent-state-dir: what the agent plans with besides the disks, read only", () => {
  const recorded = loadRawFixture("host-loop-mixed-paths");
  // loop7 as an orphan PV (in no volume group) whose UUID the agent's journal says it created.
  const lvm = recorded.lvm as { pvs: { report: [{ pv: Record<string, string>[] }] } };
  const orphanUuid = lvm.pvs.report[0].pv.find((p) => p.pv_name === "/dev/loop7")!.pv_uuid!;
  const withOrphan = {
    ...recorded,
    lvm: {
      ...lvm,
      pvs: {
        report: [
          { pv: lvm.pvs.report[0].pv.map((p) => (p.pv_name === "/dev/loop7" ? { ...p, vg_name: "" } : p)) },
        ],
      },
    },
  };
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), "inventory-agent-"))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("records lvmd.yaml as the agent reads it and the orphan PVs its journal shows it created; writes nothing", async () => {
    const state = path.join(dir, "state");
    fs.mkdirSync(state);
    const finished = {
      type: "action-finish",
      op: "o",
      index: 0,
      at: "2026-11-26T00:00:00.000Z",
      action: "pvcreate",
      device: "/dev/loop7",
      deviceId: "kname:/dev/loop7",
      pvUuid: orphanUuid,
      durationMs: 1,
    };
    // A torn last line, as a crashed agent leaves it: the agent cuts it off; the inventory must not.
    const journal = `${JSON.stringify(finished)}\n{"type":"action-sta`;
    fs.writeFileSync(path.join(state, JOURNAL_FILE), journal);
    const lvmd = path.join(dir, "lvmd.yaml");
    fs.writeFileSync(lvmd, 'device-classes:\n  - name: "thin"\n    volume-group: "vg-data"\n');
    const r = await cli(
      ["--node", "edge-1", "-q", "--agent-state-dir", state, "--lvmd-config", lvmd],
      async (options) => ({ ...withOrphan, name: options.node }),
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).nodes[0].agentPlanOptions).toEqual({
      lvmdConfigPath: lvmd,
      currentLvmdConfig: { "device-classes": [{ name: "thin", "volume-group": "vg-data" }] },
      adoptOrphanPvs: [`pv:${orphanUuid}`],
    });
    expect(fs.readFileSync(path.join(state, JOURNAL_FILE), "utf8")).toBe(journal);
  });

  it("an agent that never ran (no state directory, no lvmd.yaml): nothing to adopt, lvmd.yaml null, nothing created", async () => {
    const state = path.join(dir, "never");
    const lvmd = path.join(dir, "none.yaml");
    const r = await cli(
      ["--node", "edge-1", "-q", "--agent-state-dir", state, "--lvmd-config", lvmd],
      async (options) => ({ ...recorded, name: options.node }),
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).nodes[0].agentPlanOptions).toEqual({
      lvmdConfigPath: lvmd,
      currentLvmdConfig: null,
      adoptOrphanPvs: [],
    });
    expect(fs.existsSync(state)).toBe(false);
  });

  it("--lvmd-config defaults to the agent's default", () => {
    expect(parseArgs(["--agent-state-dir", "/var/lib/pulumi-lvm/agent"], "edge-1")).toMatchObject({
      agent: { stateDir: "/var/lib/pulumi-lvm/agent", lvmdConfigPath: "/etc/topolvm/lvmd.yaml" },
    });
  });

  it("a damaged journal: exit 1 naming the node and the state directory, no JSON", async () => {
    const state = path.join(dir, "state");
    fs.mkdirSync(state);
    fs.writeFileSync(path.join(state, JOURNAL_FILE), "not a record\n{}\n");
    const r = await cli(["--node", "edge-1", "-q", "--agent-state-dir", state], async (options) => ({
      ...recorded,
      name: options.node,
    }));
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(
      `pulumi-lvm inventory: node "edge-1": cannot read the agent's state in ${state}: `,
    );
  });
});
