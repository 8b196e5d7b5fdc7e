import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import {
  find,
  installMocksWithOutputs,
  runFailingProgram,
  runProgram,
  type Recorded,
} from "../../test/support/components/pulumi-mocks";
import { NodeSetDisks } from "../../provider";
import type { Template } from "../api";
import { AgentHost, agentsOf, type AgentHostArgs } from "./agent-host";
import { HostInventory, inventoriesOf } from "./host-inventory";

/** A value as the engine received it: secrets arrive wrapped. */
function unsecret<T>(v: unknown): T {
  const o = v as Record<string, unknown>;
  return (o[pulumi.runtime.specialSigKey] === pulumi.runtime.specialSecretSig ? o.value : v) as T;
}

const CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
const HOST_KEY =
  "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOa2xBaiwNCDA42xTy4reCGnsIO9/O/TUftqCVNgMcpH root@edge-1";
const inventoryOf = (host: string) =>
  JSON.stringify({ nodes: [{ name: `node-at-${host}`, lsblk: {}, lvm: null }] });

let dir: string;
let bundle: string;
let bundleHash: string;
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "host-inventory-"));
  bundle = path.join(dir, "pulumi-lvm-agent.tgz");
  fs.writeFileSync(bundle, "bytes with a hash");
  bundleHash = crypto.createHash("sha256").update(fs.readFileSync(bundle)).digest("hex");
  // The Command provider's answers: the install script's endpoint, the inventory script's JSON.
  await installMocksWithOutputs((type, name, inputs) => {
    if (type !== "command:remote:Command") return undefined;
    const host = unsecret<{ host: string }>(inputs.connection).host;
    if (name.endsWith("-prepare")) return { stdout: "/tmp/pulumi-lvm-agent.Xy3kP9qLm2" };
    return name.endsWith("-read")
      ? { stdout: inventoryOf(host) }
      : {
          stdout: JSON.stringify({
            url: `https://${host}:9443`,
            token: `token-${host}-0123456789abcdef`,
            caCertificate: CA,
          }),
        };
  });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const hostArgs = (over: Partial<AgentHostArgs> = {}): AgentHostArgs => ({
  nodeName: "edge-1",
  host: "10.0.0.11",
  user: "debian",
  privateKey: pulumi.secret("-----BEGIN OPENSSH PRIVATE KEY-----\nkey\n-----END OPENSSH PRIVATE KEY-----"),
  hostKey: HOST_KEY,
  bundle,
  devices: ["/dev/vdb", "/dev/vdc"],
  ...over,
});

const spec: Template = {
  volumeGroups: [
    {
      name: "vg-data",
      deviceSelector: {
        deviceSelectorTerms: [{ matchExpressions: [{ key: "path", operator: "In", values: ["/dev/vdb"] }] }],
      },
    },
  ],
};

describe("HostInventory of an AgentHost", () => {
  let recorded: Recorded[];
  let inventory: HostInventory;
  beforeAll(async () => {
    recorded = await runProgram(() => {
      const host = new AgentHost("edge-1", hostArgs());
      inventory = new HostInventory("edge-1-inventory", { revision: "r2" }, { host });
    });
  });

  test("reads the host over the AgentHost's own SSH connection, after the agent's install", () => {
    const read = find(recorded, "command:remote:Command", "edge-1-inventory-read");
    const agent = find(recorded, "command:remote:Command", "edge-1-agent");
    expect(read.parent).toEqual({ type: "pulumi-lvm:index:HostInventory", name: "edge-1-inventory" });
    expect(read.opts.dependsOn).toEqual([agent.resource]);
    expect(read.inputs.connection[pulumi.runtime.specialSigKey]).toBe(pulumi.runtime.specialSecretSig);
    expect(unsecret(read.inputs.connection)).toEqual(unsecret(agent.inputs.connection));
    // with the host key pinned, as every connection of its AgentHost
    expect(unsecret<{ hostKey?: string }>(read.inputs.connection).hostKey).toBe(HOST_KEY);
    // Collected again when the bundle (a new release) or the revision changes.
    expect(read.inputs.triggers).toEqual([bundleHash, "r2"]);
    expect(read.inputs.delete).toBeUndefined();
  });

  test("runs the installed release's `pulumi-lvm inventory` for the agent's node and devices, with the agent's state, and nothing that writes", () => {
    const script = find(recorded, "command:remote:Command", "edge-1-inventory-read").inputs.create as string;
    expect(script).toContain(
      `$S "$NODE" '/opt/pulumi-lvm/current/dist/src/cli/main.js' 'inventory' '--node' 'edge-1' '--device' '/dev/vdb' '--device' '/dev/vdc' '--agent-state-dir' '/var/lib/pulumi-lvm/agent' '-q'`,
    );
    expect(script).toContain('S="sudo -n"');
    const writes =
      /(^|[\s;|&(])(lvm|pvcreate|pvremove|vgcreate|vgextend|vgreduce|vgremove|lvcreate|lvremove|wipefs|rm|mkdir|tar|ln|systemctl|tee)\b/m;
    expect(script).not.toMatch(writes);
    // No redirection into a file: only messages to stderr (and "Node.js >= 20" in one).
    expect(script).not.toMatch(/>(?!&2|= )/);
  });

  test("its inventory output is the command's stdout, plain (no secret in it), and inventoriesOf keys it by node", async () => {
    const value = await new Promise<string>((resolve) => inventory.inventory.apply(resolve));
    expect(value).toBe(inventoryOf("10.0.0.11"));
    expect(await pulumi.isSecret(inventory.inventory)).toBe(false);
    expect(Object.keys(inventoriesOf([inventory]))).toEqual(["edge-1"]);
  });
});

test("NodeSetDisks takes inventoriesOf(...) beside agentsOf(...): the inventories as plain inputs, the tokens secret", async () => {
  const recorded = await runProgram(() => {
    const hosts = ["edge-1", "edge-2"].map(
      (n, i) => new AgentHost(n, hostArgs({ nodeName: n, host: `10.0.0.${11 + i}` })),
    );
    const inventories = hosts.map((host, i) => new HostInventory(`edge-${i + 1}-inventory`, {}, { host }));
    new NodeSetDisks("edge-disks", {
      nodeSetName: "edge",
      namespace: "lvm-system",
      spec,
      agents: agentsOf(hosts),
      inventories: inventoriesOf(inventories),
    });
  });
  const disks = find(recorded, "pulumi-nodejs:dynamic/pulumi-lvm:NodeSetDisks", "edge-disks");
  expect(disks.inputs.inventories).toEqual({
    "edge-1": inventoryOf("10.0.0.11"),
    "edge-2": inventoryOf("10.0.0.12"),
  });
  expect(disks.inputs.agents[pulumi.runtime.specialSigKey]).toBe(pulumi.runtime.specialSecretSig);
});

test("inventoriesOf refuses two inventories of one node", async () => {
  await runProgram(() => {
    const host = new AgentHost("x", hostArgs());
    const twice = [new HostInventory("a", {}, { host }), new HostInventory("b", {}, { host })];
    expect(() => inventoriesOf(twice)).toThrow('two HostInventories read the node "edge-1"');
  });
});

test("a host that is not an AgentHost: an error naming opts.host, nothing registered", async () => {
  const { error, registered } = await runFailingProgram(
    () => new HostInventory("bad", {}, { host: { nodeName: "edge-1" } as unknown as AgentHost }),
  );
  expect(registered).toBe(0);
  expect(error.message).toContain('HostInventory "bad"');
  expect(error.message).toContain("opts.host: must be an AgentHost made in this program");
});
