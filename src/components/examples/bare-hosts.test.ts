import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import {
  find,
  installMocksWithOutputs,
  ofType,
  runProgramDirectory,
  type Recorded,
} from "../../../test/support/components/pulumi-mocks";

/** examples/bare-hosts: three hosts get the agent over SSH, their disks are planned through it. */
const program = path.resolve(__dirname, "../../../examples/bare-hosts");
const KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nexample\n-----END OPENSSH PRIVATE KEY-----\n";
const CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

let recorded: Recorded[];
let stackOutputs: Record<string, unknown>;
beforeAll(async () => {
  await installMocksWithOutputs((type, name, inputs) =>
    type === "command:remote:Command" && name.endsWith("-prepare")
      ? { stdout: "/tmp/pulumi-lvm-agent.Xy3kP9qLm2" }
      : type === "command:remote:Command" && name.endsWith("-read")
        ? {
            stdout: JSON.stringify({
              nodes: [{ name: name.replace(/-inventory-read$/, ""), lsblk: {}, lvm: null }],
            }),
          }
        : type === "command:remote:Command"
          ? {
              stdout: JSON.stringify({
                // the URL the install script is given, as the real one prints it
                url: /'(https:[^']+)' '[^']*\/etc\/tokens'/.exec(String(inputs.create))?.[1],
                token: `token-${name}-0123456789abcdef`,
                caCertificate: CA,
              }),
            }
          : undefined,
  );
  pulumi.runtime.setAllConfig(
    {
      "project:sshPrivateKey": KEY,
      // A real file with a hash: the example's own package.json stands in for the bundle.
      "project:agentBundle": path.join(program, "package.json"),
    },
    ["project:sshPrivateKey"],
  );
  ({ recorded, exports: stackOutputs } = await runProgramDirectory(program));
});

test("one AgentHost per host, each copying the bundle and installing the agent", () => {
  const hosts = ofType(recorded, "pulumi-lvm:index:AgentHost").map((r) => r.name);
  expect(hosts).toEqual(["edge-1", "edge-2", "edge-3"]);
  for (const h of hosts) {
    expect(find(recorded, "command:remote:CopyToRemote", `${h}-bundle`).parent?.name).toBe(h);
    const cmd = find(recorded, "command:remote:Command", `${h}-agent`);
    expect(cmd.inputs.create).toContain("'--devices' '/dev/vdb,/dev/vdc'".replace(/'/g, "'\\''"));
  }
});

test("the private key is a secret in every connection", async () => {
  for (const cmd of ofType(recorded, "command:remote:Command"))
    expect(await pulumi.isSecret(cmd.props.connection.privateKey)).toBe(true);
});

test("the disks of the three hosts through their agents, CA pinned, tokens secret; no cluster objects", () => {
  const disks = find(recorded, "pulumi-nodejs:dynamic/pulumi-lvm:NodeSetDisks", "edge-disks");
  expect(Object.keys(disks.inputs.agents.value)).toEqual(["edge-1", "edge-2", "edge-3"]);
  expect(disks.inputs.agents.value["edge-2"]).toEqual({
    url: "https://10.0.0.12:9443",
    token: "token-edge-2-agent-0123456789abcdef",
    ca: CA,
  });
  expect(disks.inputs.agents[pulumi.runtime.specialSigKey]).toBe(pulumi.runtime.specialSecretSig);
  expect(disks.inputs.spec.deviceClasses[0].thin.poolName).toBe("pool0");
  expect(recorded.filter((r) => r.type.startsWith("kubernetes:"))).toEqual([]);
  expect(stackOutputs.agentUrls).toBeDefined();
});

test("each host's inventory is read after its agent's install and planned from, keyed by node", () => {
  const disks = find(recorded, "pulumi-nodejs:dynamic/pulumi-lvm:NodeSetDisks", "edge-disks");
  expect(Object.keys(disks.inputs.inventories)).toEqual(["edge-1", "edge-2", "edge-3"]);
  expect(JSON.parse(disks.inputs.inventories["edge-2"]).nodes[0].name).toBe("edge-2");
  for (const h of ["edge-1", "edge-2", "edge-3"]) {
    const read = find(recorded, "command:remote:Command", `${h}-inventory-read`);
    expect(read.parent).toEqual({ type: "pulumi-lvm:index:HostInventory", name: `${h}-inventory` });
    expect(read.opts.dependsOn).toEqual([find(recorded, "command:remote:Command", `${h}-agent`).resource]);
    expect(read.inputs.create).toContain(
      `'inventory' '--node' '${h}' '--device' '/dev/vdb' '--device' '/dev/vdc'`,
    );
  }
});
