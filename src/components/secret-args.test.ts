import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { edgeArgs } from "../../test/support/components/fixtures";
import {
  find,
  installMocks,
  installMocksWithOutputs,
  runFailingProgram,
  runProgram,
} from "../../test/support/components/pulumi-mocks";
import { AgentHost, type AgentHostArgs } from "./agent-host";
import { NodeSet, NODE_SET_TYPE } from "./node-set";
import * as secretArgs from "./secret-args";

// The components as the component provider's process runs them: only the detection of that
// process (servedByComponentProvider, tested on its own below) is replaced.
jest.mock("./secret-args", () => {
  const actual = jest.requireActual<typeof import("./secret-args")>("./secret-args");
  return {
    ...actual,
    secretArgProblems: (args: unknown, paths: readonly secretArgs.SecretArgPath[]) =>
      actual.secretArgProblems(args, paths, served),
    secretArgsGuard: (c: string, n: string, args: unknown, paths: readonly secretArgs.SecretArgPath[]) =>
      actual.secretArgsGuard(c, n, args, paths, served),
  };
});
let served = true;

const DISKS = "pulumi-nodejs:dynamic/pulumi-lvm:NodeSetDisks";
const URL_ = "http://127.0.0.1:9443";
const TOKEN = "plain-token-0123456789abcdef";
const KUBECONFIG = "apiVersion: v1\nkind: Config\n";
const HOW =
  /Python `pulumi\.Output\.secret\(\.\.\.\)`.*YAML `fn::secret`.*TypeScript `pulumi\.secret\(\.\.\.\)`/s;

let dir: string;
let bundle: string;
beforeAll(async () => {
  await installMocks();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "secret-args-"));
  bundle = path.join(dir, "bundle.tgz");
  fs.writeFileSync(bundle, "bytes");
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
beforeEach(async () => {
  served = true;
  await installMocks();
});

const hostArgs = (privateKey: pulumi.Input<string>): AgentHostArgs => ({
  nodeName: "edge-1",
  host: "10.0.0.11",
  user: "debian",
  privateKey,
  hostKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOa2xBaiwNCDA42xTy4reCGnsIO9/O/TUftqCVNgMcpH root@edge-1",
  bundle,
});

/** Settles an Output: its value, or the error it was rejected with. */
function settle<T>(o: pulumi.Output<T>): Promise<{ value?: T; error?: Error }> {
  return (o as unknown as { promise(): Promise<T> }).promise().then(
    (value) => ({ value }),
    (error: Error) => ({ error }),
  );
}

describe("servedByComponentProvider: the process the Node.js host runs a plugin in", () => {
  const main = (filename: string) => ({ filename }) as NodeJS.Module;
  test("@pulumi/pulumi's cmd/run-plugin as the main module is the component provider", () => {
    expect(
      secretArgs.servedByComponentProvider(
        main("/p/node_modules/pulumi-lvm/node_modules/@pulumi/pulumi/cmd/run-plugin/index.js"),
      ),
    ).toBe(true);
  });
  test("a TypeScript program (cmd/run), a test runner or no main module is not", () => {
    expect(
      secretArgs.servedByComponentProvider(main("/p/node_modules/@pulumi/pulumi/cmd/run/index.js")),
    ).toBe(false);
    expect(secretArgs.servedByComponentProvider(main("/p/cmd/run-plugin/index.js"))).toBe(false);
    expect(secretArgs.servedByComponentProvider(undefined)).toBe(false);
    // This test's own process (jest).
    expect(secretArgs.servedByComponentProvider()).toBe(false);
  });
});

describe("through the component provider: plain secret args are refused before anything registers", () => {
  test("NodeSet: a plain agents.<node>.token, naming its path and how to pass a secret in each language", async () => {
    const agents = {
      "node-a": { url: URL_, token: TOKEN },
      "node-b": { url: URL_, token: pulumi.secret(TOKEN) },
    };
    const { error, registered } = await runFailingProgram(
      () => new NodeSet("edge", { ...edgeArgs(), agents }),
    );
    expect(registered).toBe(0);
    expect(error.message).toContain('NodeSet "edge" is invalid');
    expect(error.message).toContain("args.agents.node-a.token: is not a secret");
    expect(error.message).not.toContain("node-b");
    expect(error.message).toMatch(HOW);
    expect(error.message).not.toContain(TOKEN);
  });

  test("NodeSet: a plain cluster.kubeconfig", async () => {
    const cluster = { kubeconfig: KUBECONFIG, serviceAccountName: "lvm-provisioner" };
    const { error, registered } = await runFailingProgram(
      () => new NodeSet("edge", { ...edgeArgs(), cluster }),
    );
    expect(registered).toBe(0);
    expect(error.message).toContain("args.cluster.kubeconfig: is not a secret");
    expect(error.message).not.toContain("kind: Config");
  });

  test("AgentHost: a plain privateKey, with its other problems", async () => {
    const { error, registered } = await runFailingProgram(
      () => new AgentHost("edge-1", { ...hostArgs("-----BEGIN OPENSSH PRIVATE KEY-----"), port: 0 }),
    );
    expect(registered).toBe(0);
    expect(error.message).toContain("args.privateKey: is not a secret");
    expect(error.message).toContain("args.port");
    expect(error.message).toMatch(HOW);
  });

  test("secrets pass: the NodeSet registers its NodeSetDisks with the token, a secret", async () => {
    const agents = { "node-a": { url: URL_, token: pulumi.secret(TOKEN) } };
    const recorded = await runProgram(() => new NodeSet("edge", { ...edgeArgs(), agents }));
    const disks = find(recorded, DISKS, "edge-disks");
    expect(disks.inputs.agents.value["node-a"].token).toBe(TOKEN);
    expect(await pulumi.isSecret(disks.props.agents["node-a"].token)).toBe(true);
  });
});

describe("through the component provider: a secret arg given as a non-secret Output", () => {
  /**
   * Constructs in a stack and settles the outputs; returns the types the mock engine received a
   * registration of. Not runProgram: a child held back by the refusal never gets its URN.
   */
  async function construct(make: () => Array<pulumi.Output<unknown>>) {
    const types: string[] = [];
    await installMocksWithOutputs((type) => {
      types.push(type);
      return undefined;
    });
    let outputs: Array<pulumi.Output<unknown>> = [];
    await pulumi.runtime.runInPulumiStack(async () => {
      outputs = make();
    });
    const settled = await Promise.all(outputs.map(settle));
    await new Promise((resolve) => setTimeout(resolve, 200)); // any registration that was started arrives
    return { settled, types };
  }

  test("NodeSet: its outputs fail with the refusal, and no NodeSetDisks gets the token", async () => {
    const agents = { "node-a": { url: URL_, token: pulumi.output(TOKEN) } };
    const { settled, types } = await construct(() => {
      const n = new NodeSet("edge", { ...edgeArgs(), agents });
      return [n.nodeSetName, n.namespace, n.storageClassNames, n.snapshotClassNames, n.nodes];
    });
    expect(types).toContain(NODE_SET_TYPE);
    expect(types).not.toContain(DISKS);
    for (const { error } of settled)
      expect(error?.message).toContain("args.agents.node-a.token: is not a secret");
  });

  test("AgentHost: its outputs fail with the refusal, and no SSH command gets the key", async () => {
    const { settled, types } = await construct(() => {
      const h = new AgentHost("edge-1", hostArgs(pulumi.output("-----BEGIN OPENSSH PRIVATE KEY-----")));
      return [
        h.nodeName,
        h.endpoint.url as pulumi.Output<unknown>,
        h.endpoint.token as pulumi.Output<unknown>,
      ];
    });
    expect(types).toContain("pulumi-lvm:index:AgentHost");
    expect(types.filter((t) => t.startsWith("command:"))).toEqual([]);
    for (const { error } of settled) expect(error?.message).toContain("args.privateKey: is not a secret");
  });
});

describe("in a TypeScript program (not served): plain values are accepted, as before", () => {
  test("the component itself records no inputs; the token reaches its child only as a secret", async () => {
    served = false;
    const agents = { "node-a": { url: URL_, token: TOKEN } };
    const recorded = await runProgram(() => new NodeSet("edge", { ...edgeArgs(), agents }));
    // A local ComponentResource registers without its args: nothing of them is in the state.
    expect(find(recorded, NODE_SET_TYPE, "edge").inputs).toEqual({});
    const disks = find(recorded, DISKS, "edge-disks");
    expect(disks.inputs.agents[pulumi.runtime.specialSigKey]).toBe(pulumi.runtime.specialSecretSig);
  });
});
