import { loadRawFixture } from "../../test/fixtures/inventory/load";
import type { DiscoverOptions } from "../inventory/discover";
import { INVENTORY_USAGE, parseArgs, runInventory, type Discover } from "./inventory";
import type { CliIO } from "./io";

async function cli(argv: string[], discover: Discover) {
  let stdout = "";
  let stderr = "";
  const io: CliIO = {
    argv,
    readFile: () => Promise.reject(new Error("not used")),
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
  };
  return { code: await runInventory(io, discover), stdout, stderr };
}

describe("pulumi-lvm inventory", () => {
  const recorded = loadRawFixture("host-loop-mixed-paths");

  it("prints the machine's raw inventory as an inventory file, with the node name and labels asked for", async () => {
    const asked: DiscoverOptions[] = [];
    const r = await cli(
      ["--node", "edge-1", "--label", "zone=a", "--label=role=storage", "--device", "/dev/sdb"],
      async (options) => {
        asked.push(options);
        return { ...recorded, name: options.node, labels: options.labels };
      },
    );
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(asked).toEqual([
      { node: "edge-1", labels: { zone: "a", role: "storage" }, devices: ["/dev/sdb"] },
    ]);
    expect(JSON.parse(r.stdout)).toEqual({
      nodes: [{ ...recorded, name: "edge-1", labels: { zone: "a", role: "storage" } }],
    });
  });

  it("names the node in a discovery failure and prints nothing on stdout", async () => {
    const r = await cli(["--node", "edge-1"], () =>
      Promise.reject(new Error("lsblk --json --bytes --output-all --paths: exit 32: lsblk: failed")),
    );
    expect(r).toEqual({
      code: 1,
      stdout: "",
      stderr:
        'pulumi-lvm inventory: node "edge-1": lsblk --json --bytes --output-all --paths: exit 32: lsblk: failed\n',
    });
  });

  it.each([
    [["--bogus"], 'unknown argument "--bogus"'],
    [["--node"], "--node needs a value"],
    [["--label", "zone"], "--label zone: must be <key>=<value>"],
    [["--label", "=a"], "--label =a: must be <key>=<value>"],
    [["--device", "sdb"], "--device sdb: must be a /dev/ path"],
    [["--node", "Edge_1"], "--node Edge_1 is not a node name: it "],
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

describe("parseArgs", () => {
  it("defaults the node name to the hostname", () => {
    expect(parseArgs([], "edge-7")).toEqual({ kind: "run", options: { node: "edge-7" } });
  });

  it("asks for --node when the hostname is not a node name", () => {
    expect(parseArgs([], "EDGE_7")).toMatchObject({
      kind: "error",
      message: expect.stringMatching(/^the hostname "EDGE_7" is not a node name: it .*; pass --node$/),
    });
  });
});
