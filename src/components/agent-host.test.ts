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
import { AgentHost, agentsOf, type AgentHostArgs } from "./agent-host";
import { NodeSet } from "./node-set";

/** A value as the engine received it: secrets arrive wrapped. */
function unsecret<T>(v: unknown): T {
  const o = v as Record<string, unknown>;
  return (o[pulumi.runtime.specialSigKey] === pulumi.runtime.specialSecretSig ? o.value : v) as T;
}

const CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
const tokenOf = (host: string) => `token-of-${host}-0123456789abcdef`;

let dir: string;
let bundle: string;
let bundleHash: string;
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-host-"));
  bundle = path.join(dir, "pulumi-lvm-agent.tgz");
  fs.writeFileSync(bundle, "not really a tarball, but bytes with a hash");
  bundleHash = crypto.createHash("sha256").update(fs.readFileSync(bundle)).digest("hex");
  // The Command provider's answer: what the install script prints on the host.
  await installMocksWithOutputs((type, _name, inputs) => {
    if (type !== "command:remote:Command") return undefined;
    const host = unsecret<{ host: string }>(inputs.connection).host;
    return {
      stdout: JSON.stringify({ url: `https://${host}:9443`, token: tokenOf(host), caCertificate: CA }),
    };
  });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const args = (over: Partial<AgentHostArgs> = {}): AgentHostArgs => ({
  nodeName: "edge-1",
  host: "10.0.0.11",
  user: "debian",
  privateKey: pulumi.secret("-----BEGIN OPENSSH PRIVATE KEY-----\nkey\n-----END OPENSSH PRIVATE KEY-----"),
  bundle,
  ...over,
});

describe("children", () => {
  let recorded: Recorded[];
  let host: AgentHost;
  beforeAll(async () => {
    recorded = await runProgram(() => {
      host = new AgentHost("edge-1", args());
    });
  });

  test("copies the bundle, named by its hash, with the hash as the upgrade trigger", () => {
    const copy = find(recorded, "command:remote:CopyToRemote", "edge-1-bundle");
    expect(copy.parent).toEqual({ type: "pulumi-lvm:index:AgentHost", name: "edge-1" });
    expect(copy.inputs.remotePath).toBe(`/tmp/pulumi-lvm-agent-${bundleHash.slice(0, 16)}.tgz`);
    expect(copy.inputs.triggers).toEqual([bundleHash]);
    // The private key makes the whole connection a secret.
    expect(copy.inputs.connection[pulumi.runtime.specialSigKey]).toBe(pulumi.runtime.specialSecretSig);
    expect(unsecret(copy.inputs.connection)).toMatchObject({ host: "10.0.0.11", port: 22, user: "debian" });
  });

  test("installs with sudo after the copy; stdout (the token) is a secret output, the key a secret input", async () => {
    const cmd = find(recorded, "command:remote:Command", "edge-1-agent");
    const copy = find(recorded, "command:remote:CopyToRemote", "edge-1-bundle");
    expect(cmd.opts.dependsOn).toEqual([copy.resource]);
    expect(cmd.opts.additionalSecretOutputs).toContain("stdout");
    expect(cmd.inputs.triggers).toEqual([bundleHash]);
    expect(cmd.inputs.create).toContain('S="sudo -n"');
    expect(cmd.inputs.create).toContain(`releases/${bundleHash}`);
    expect(cmd.inputs.delete).toContain("systemctl disable --now pulumi-lvm-agent.service");
    expect(await pulumi.isSecret(cmd.props.connection.privateKey)).toBe(true);
  });

  test("never runs an lvm command on the host: the disks change only through previewed plans", () => {
    const cmd = find(recorded, "command:remote:Command", "edge-1-agent");
    const lvm =
      /(^|[\s;|&(])(lvm|pvcreate|pvremove|vgcreate|vgextend|vgreduce|vgremove|lvcreate|lvremove|wipefs)\b/;
    expect(cmd.inputs.create).not.toMatch(lvm);
    expect(cmd.inputs.delete).not.toMatch(lvm);
    // and the delete keeps the agent's journal
    expect(cmd.inputs.delete).not.toContain("/var/lib/pulumi-lvm");
  });

  test("the endpoint is read back from the host: the URL and CA plain, the token secret", async () => {
    const value = <T>(o: pulumi.Input<T> | undefined) =>
      new Promise<T>((resolve) => pulumi.output(o!).apply((v) => resolve(v as T)));
    expect(await value(host.endpoint.url)).toBe("https://10.0.0.11:9443");
    expect(await value(host.endpoint.token)).toBe(tokenOf("10.0.0.11"));
    expect(await value(host.endpoint.caCertificate)).toBe(CA);
    expect(await pulumi.isSecret(pulumi.output(host.endpoint.token))).toBe(true);
    expect(await pulumi.isSecret(pulumi.output(host.endpoint.url))).toBe(false);
  });
});

test("root needs no sudo; sudo can be forced off; agentUrl goes into the certificate's names", async () => {
  const recorded = await runProgram(() => {
    new AgentHost("a", args({ user: "root", nodeName: "a" }));
    new AgentHost("b", args({ nodeName: "b", sudo: false, agentUrl: "https://agents.example:19443" }));
  });
  expect(find(recorded, "command:remote:Command", "a-agent").inputs.create).toContain('S=""');
  const b = find(recorded, "command:remote:Command", "b-agent").inputs.create as string;
  expect(b).toContain('S=""');
  expect(b).toContain("agents.example");
  expect(b).toContain("'https://agents.example:19443'");
});

test("NodeSet takes agentsOf(hosts): each node's URL, secret token and pinned CA", async () => {
  const recorded = await runProgram(() => {
    const hosts = ["edge-1", "edge-2"].map(
      (n, i) => new AgentHost(n, args({ nodeName: n, host: `10.0.0.${11 + i}` })),
    );
    new NodeSet("edge", {
      template: {
        volumeGroups: [
          {
            name: "vg-data",
            deviceSelector: {
              deviceSelectorTerms: [
                { matchExpressions: [{ key: "path", operator: "In", values: ["/dev/vdb"] }] },
              ],
            },
          },
        ],
      },
      agents: agentsOf(hosts),
    });
  });
  const disks = find(recorded, "pulumi-nodejs:dynamic/pulumi-lvm:NodeSetDisks", "edge-disks");
  expect(disks.inputs.agents).toEqual({
    [pulumi.runtime.specialSigKey]: pulumi.runtime.specialSecretSig,
    value: {
      "edge-1": { url: "https://10.0.0.11:9443", token: tokenOf("10.0.0.11"), ca: CA },
      "edge-2": { url: "https://10.0.0.12:9443", token: tokenOf("10.0.0.12"), ca: CA },
    },
  });
});

test("agentsOf refuses two hosts for one node", async () => {
  await runProgram(() => {
    const hosts = [new AgentHost("x", args()), new AgentHost("y", args({ host: "10.0.0.12" }))];
    expect(() => agentsOf(hosts)).toThrow('two AgentHosts serve the node "edge-1"');
  });
});

test("bad args: every problem named by its path, nothing registered", async () => {
  const { error, registered } = await runFailingProgram(
    () =>
      new AgentHost(
        "bad",
        args({
          nodeName: "Edge_1",
          user: "",
          port: 0,
          agentUrl: "http://plain:80",
          devices: ["vdb"],
        }),
      ),
  );
  expect(registered).toBe(0);
  expect(error.message).toContain('AgentHost "bad"');
  for (const p of ["args.nodeName", "args.user", "args.port", "args.agentUrl", "args.devices[0]"])
    expect(error.message).toContain(p);
});

test("a bundle that cannot be read is an error naming it, nothing registered", async () => {
  const missing = path.join(dir, "missing.tgz");
  const { error, registered } = await runFailingProgram(() => new AgentHost("m", args({ bundle: missing })));
  expect(registered).toBe(0);
  expect(error.message).toContain("args.bundle");
  expect(error.message).toContain(missing);
});
