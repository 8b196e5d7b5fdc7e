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
import { AgentHost, agentsOf, parseAgentOutput, parseIncomingDir, type AgentHostArgs } from "./agent-host";
import { credentialsIdOf } from "./agent-host-script";
import { NodeSet } from "./node-set";

/** A value as the engine received it: secrets arrive wrapped. */
function unsecret<T>(v: unknown): T {
  const o = v as Record<string, unknown>;
  return (o[pulumi.runtime.specialSigKey] === pulumi.runtime.specialSecretSig ? o.value : v) as T;
}

const CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
/** What mktemp -d printed on the host (the prepare command's stdout). */
const INCOMING = "/tmp/pulumi-lvm-agent.Xy3kP9qLm2";
const HOST_KEY =
  "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOa2xBaiwNCDA42xTy4reCGnsIO9/O/TUftqCVNgMcpH root@edge-1";
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
  await installMocksWithOutputs((type, name, inputs) => {
    if (type !== "command:remote:Command") return undefined;
    if (name.endsWith("-prepare")) return { stdout: INCOMING };
    const host = unsecret<{ host: string }>(inputs.connection).host;
    // The install prints the URL it is given.
    const url = /'(https:[^']+)' '[^']*\/etc\/tokens'/.exec(String(inputs.create))?.[1];
    return { stdout: JSON.stringify({ url, token: tokenOf(host), caCertificate: CA }) };
  });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const args = (over: Partial<AgentHostArgs> = {}): AgentHostArgs => ({
  nodeName: "edge-1",
  host: "10.0.0.11",
  user: "debian",
  privateKey: pulumi.secret("-----BEGIN OPENSSH PRIVATE KEY-----\nkey\n-----END OPENSSH PRIVATE KEY-----"),
  hostKey: HOST_KEY,
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

  test("copies the bundle into the directory the prepare command made (mktemp -d, the SSH user's, 0700), with the hash as the upgrade trigger", () => {
    const prepare = find(recorded, "command:remote:Command", "edge-1-prepare");
    expect(prepare.parent).toEqual({ type: "pulumi-lvm:index:AgentHost", name: "edge-1" });
    expect(prepare.inputs.create).toContain('mktemp -d "${TMPDIR:-/tmp}/pulumi-lvm-agent.XXXXXXXXXX"');
    expect(prepare.inputs.create).not.toContain("sudo");
    expect(prepare.inputs.triggers).toEqual([bundleHash]);
    const copy = find(recorded, "command:remote:CopyToRemote", "edge-1-bundle");
    expect(copy.parent).toEqual({ type: "pulumi-lvm:index:AgentHost", name: "edge-1" });
    expect(copy.inputs.remotePath).toBe(`${INCOMING}/bundle.tgz`);
    expect(copy.inputs.triggers).toEqual([bundleHash]);
    expect(copy.opts.dependsOn).toEqual([prepare.resource]);
    // The private key makes the whole connection a secret.
    expect(copy.inputs.connection[pulumi.runtime.specialSigKey]).toBe(pulumi.runtime.specialSecretSig);
    expect(unsecret(copy.inputs.connection)).toMatchObject({ host: "10.0.0.11", port: 22, user: "debian" });
  });

  test("every SSH connection pins the host key: the prepare, the copy, the install", () => {
    for (const [type, child] of [
      ["command:remote:Command", "edge-1-prepare"],
      ["command:remote:CopyToRemote", "edge-1-bundle"],
      ["command:remote:Command", "edge-1-agent"],
    ] as const)
      expect(unsecret<{ hostKey?: string }>(find(recorded, type, child).inputs.connection).hostKey).toBe(
        HOST_KEY,
      );
  });

  test("installs with sudo after the copy, from that directory, checking the bundle's hash; stdout (the token) is a secret output, the key a secret input", async () => {
    const cmd = find(recorded, "command:remote:Command", "edge-1-agent");
    const copy = find(recorded, "command:remote:CopyToRemote", "edge-1-bundle");
    expect(cmd.opts.dependsOn).toEqual([copy.resource]);
    expect(cmd.opts.additionalSecretOutputs).toContain("stdout");
    expect(cmd.inputs.triggers).toEqual([bundleHash]);
    expect(cmd.inputs.create).toContain('S="sudo -n"');
    expect(cmd.inputs.create).toContain(`releases/${bundleHash}`);
    expect(cmd.inputs.create).toContain(`own_dir '${INCOMING}'`);
    expect(cmd.inputs.create).toContain(
      `printf '%s  %s\\n' ${bundleHash} "$stage/bundle.tgz" | $S sha256sum -c -`,
    );
    expect(cmd.inputs.create).toContain("--no-same-owner --no-same-permissions");
    expect(cmd.inputs.delete).toContain("systemctl disable --now pulumi-lvm-agent.service");
    expect(cmd.inputs.delete).toContain(`drop_incoming '${INCOMING}'`);
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

describe("the SSH host key", () => {
  test("required: without hostKey (and without insecureIgnoreHostKey) nothing is registered, the message says how", async () => {
    const { error, registered } = await runFailingProgram(
      () => new AgentHost("k", args({ hostKey: undefined })),
    );
    expect(registered).toBe(0);
    expect(error.message).toContain("args.hostKey: is required: the host's SSH public key");
    expect(error.message).toContain("insecureIgnoreHostKey: true connects without checking");
  });

  test.each([
    [
      "a line from ssh-keyscan (the host name first)",
      `10.0.0.11 ${HOST_KEY}`,
      "a line from ssh-keyscan or known_hosts starts with the host name",
    ],
    [
      "a private key",
      "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
      "got several lines",
    ],
    ["not base64", "ssh-ed25519 not*base64", "its key is not base64"],
    [
      "an ed25519 key given as ecdsa",
      HOST_KEY.replace("ssh-ed25519", "ecdsa-sha2-nistp256"),
      "its base64 is not a ecdsa-sha2-nistp256 key",
    ],
    ["an unknown type", "ssh-dss AAAAB3NzaC1kc3MAAACBAP", "is not one of ssh-ed25519"],
  ])("a malformed hostKey (%s) is refused at args.hostKey", async (_what, hostKey, message) => {
    const { error, registered } = await runFailingProgram(() => new AgentHost("k", args({ hostKey })));
    expect(registered).toBe(0);
    expect(error.message).toContain("args.hostKey");
    expect(error.message).toContain(message);
  });

  test("hostKey and insecureIgnoreHostKey together are refused", async () => {
    const { error } = await runFailingProgram(
      () => new AgentHost("k", args({ insecureIgnoreHostKey: true })),
    );
    expect(error.message).toContain("args.insecureIgnoreHostKey: cannot go with hostKey");
  });

  test("insecureIgnoreHostKey: true alone connects without a host key", async () => {
    const recorded = await runProgram(() => {
      new AgentHost("i", args({ hostKey: undefined, insecureIgnoreHostKey: true, nodeName: "i" }));
    });
    const conn = unsecret<Record<string, unknown>>(
      find(recorded, "command:remote:Command", "i-agent").inputs.connection,
    );
    expect(conn).not.toHaveProperty("hostKey");
  });

  test("a hostKey from an Output is passed on as it is", async () => {
    const recorded = await runProgram(() => {
      new AgentHost("o", args({ hostKey: pulumi.output(HOST_KEY), nodeName: "o" }));
    });
    const conn = unsecret<Record<string, unknown>>(
      find(recorded, "command:remote:Command", "o-prepare").inputs.connection,
    );
    expect(conn.hostKey).toBe(HOST_KEY);
  });
});

describe("what the host prints is checked", () => {
  const out = (url: string) => JSON.stringify({ url, token: "t".repeat(32), caCertificate: CA });

  test("another URL than the planned one is refused, naming both", () => {
    expect(() => parseAgentOutput("edge-1", out("https://10.6.6.6:9443"), "https://10.0.0.11:9443")).toThrow(
      'AgentHost "edge-1": the host says its agent serves at "https://10.6.6.6:9443", not at the planned https://10.0.0.11:9443: refusing its answer',
    );
    expect(parseAgentOutput("edge-1", out("https://10.0.0.11:9443"), "https://10.0.0.11:9443").url).toBe(
      "https://10.0.0.11:9443",
    );
  });

  test.each([
    ["nothing", ""],
    ["a relative path", "tmp/pulumi-lvm-agent.Xy3kP9qLm2"],
    ["a path with ..", "/tmp/../etc/pulumi-lvm-agent.Xy3kP9qLm2"],
    ["a path with a space", "/tmp/my dir/pulumi-lvm-agent.Xy3kP9qLm2"],
    ["another directory", "/etc"],
    ["two lines", `${INCOMING}\n/etc`],
  ])("the prepare command printing %s is refused", (_what, stdout) => {
    expect(() => parseIncomingDir("edge-1", stdout)).toThrow(
      'AgentHost "edge-1": mktemp on the host did not print a directory for the bundle',
    );
  });
});

test("credentialsRevision changes the install's create (an update: it runs again and rotates; no replacement, no delete), not the copy", async () => {
  const recorded = await runProgram(() => {
    new AgentHost("r", args({ nodeName: "r", credentialsRevision: "2027-01" }));
    new AgentHost("s", args({ nodeName: "r" }));
  });
  const cmd = find(recorded, "command:remote:Command", "r-agent");
  expect(cmd.inputs.triggers).toEqual([bundleHash]);
  expect(credentialsIdOf("2027-01")).not.toBe(credentialsIdOf(""));
  expect(cmd.inputs.create).toContain(`= ${credentialsIdOf("2027-01")} ] || rotate=rotate`);
  const [none, rev] = [credentialsIdOf(""), credentialsIdOf("2027-01")];
  const same = (find(recorded, "command:remote:Command", "s-agent").inputs.create as string)
    .replace(`= ${none} ]`, `= ${rev} ]`)
    .replace(`echo ${none} | $S`, `echo ${rev} | $S`);
  // The only difference from the same host without a revision.
  expect(same).toBe(cmd.inputs.create);
  expect(find(recorded, "command:remote:CopyToRemote", "r-bundle").inputs.triggers).toEqual([bundleHash]);
});
