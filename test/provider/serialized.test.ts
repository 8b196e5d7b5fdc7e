/**
 * The provider as Pulumi stores it: `pulumi.runtime.serializeFunction` on the provider object (the
 * call `pulumi.dynamic.Resource` makes), written to a file like a state, then evaluated in a fresh
 * `node` process the way the engine's dynamic-provider host does it (`requireFromString(text).handler()`,
 * in the program's directory), which calls `check` against a running agent. This is the "imports inside
 * methods, logic in a versioned runtime module" design working from state: the stored text holds no
 * logic, and the runtime it loads at call time is provider/runtime/v1 of the pulumi-lvm package.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  commandLog,
  isWrite,
  pvs,
  REPO,
  requireHostTier,
  Scratch,
  startAgent,
  thickSpec,
  writeTokenFile,
  type AgentProcess,
} from "../agent/harness";
import { plainOccurrences, secret, serializeProvider } from "./engine";
import { PROGRAM_DIR, PROVIDER_TESTS_ROOT } from "./paths";

jest.setTimeout(120_000);

const NODE = "node-ser";
const VG = `prov-${randomBytes(3).toString("hex")}`;

let scratch: Scratch;
let agent: AgentProcess | undefined;
let token: string;
let L1: string;

/** The host's own steps: require the stored text as a module, call handler(), call check, print the result. */
const DRIVER = `
const fs = require("fs");
const [stateFile, newsFile] = process.argv.slice(2);
const host = require.resolve("@pulumi/pulumi/cmd/dynamic-provider", { paths: [process.cwd()] });
const requireFromString = require(require.resolve("require-from-string", { paths: [host] }));
const provider = requireFromString(fs.readFileSync(stateFile, "utf8")).handler();
provider.check({}, JSON.parse(fs.readFileSync(newsFile, "utf8"))).then(
  (result) => {
    const runtime = Object.keys(require.cache).filter((f) => f.includes("/provider/runtime/"));
    process.stdout.write(JSON.stringify({ result, runtime }));
  },
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
`;

beforeAll(async () => {
  requireHostTier();
  scratch = new Scratch("serialized", PROVIDER_TESTS_ROOT);
  L1 = scratch.loop();
  token = writeTokenFile(scratch.path("tokens"), { op: { user: "pulumi", node: NODE } }).op!;
  agent = await startAgent({
    node: NODE,
    devices: [L1],
    ...scratch.agentFiles(),
    auth: { tokenFile: scratch.path("tokens") },
  });
  fs.writeFileSync(scratch.path("provider.js"), await serializeProvider());
  fs.writeFileSync(scratch.path("driver.js"), DRIVER);
});

afterAll(async () => {
  await agent?.stop();
  scratch?.cleanup();
});

/** A program directory that has pulumi-lvm installed (node_modules), outside any checkout. */
function installedProgram(): string {
  const dir = scratch.path("installed-program");
  fs.mkdirSync(path.join(dir, "node_modules"), { recursive: true });
  fs.symlinkSync(REPO, path.join(dir, "node_modules", "pulumi-lvm"));
  fs.symlinkSync(path.join(REPO, "node_modules", "@pulumi"), path.join(dir, "node_modules", "@pulumi"));
  return dir;
}

function runDriver(
  cwd: string,
): Promise<{ result: { inputs: Record<string, unknown>; failures?: unknown[] }; runtime: string[] }> {
  const news = {
    nodeSetName: "edge",
    namespace: "lvm-system",
    spec: thickSpec(VG, [L1]),
    agents: { [NODE]: { url: agent!.url, token } },
  };
  fs.writeFileSync(scratch.path("news.json"), JSON.stringify(news), { mode: 0o600 });
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [scratch.path("driver.js"), scratch.path("provider.js"), scratch.path("news.json")],
      { cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    child.on("exit", (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`driver exited ${code}:\n${err}`)),
    );
  });
}

describe("the serialized provider, evaluated in a fresh node process", () => {
  it("holds the runtime version and the loader, no logic and no secrets", () => {
    const text = fs.readFileSync(scratch.path("provider.js"), "utf8");
    expect(text).toContain('VERSION: "v1"');
    expect(text).toContain("exports.handler");
    for (const logic of ["/v1/plan", "/v1/apply", "summarizePlan", "sealSecrets", "zod"])
      expect(text).not.toContain(logic);
  });

  it.each([
    ["a program in the checkout", () => PROGRAM_DIR],
    ["a program with pulumi-lvm in its node_modules", installedProgram],
  ])("from %s: check plans against the running agent and returns the summary", async (_what, programDir) => {
    const before = commandLog(scratch.path("commands.jsonl")).length;
    const { result, runtime } = await runDriver(programDir());
    expect(result.failures ?? []).toEqual([]);
    expect((result.inputs.plans as Record<string, unknown>)[NODE]).toMatchObject({
      selected: true,
      hash: expect.stringMatching(/^[0-9a-f]{16,}$/),
      claimed: [`${L1} → ${VG} (new volume group)`],
      excluded: [],
      blocked: [],
      actions: [
        expect.stringMatching(new RegExp(`^pvcreate ${L1}: `)),
        expect.stringMatching(new RegExp(`^vgcreate ${VG}: `)),
        expect.stringMatching(new RegExp(`^pvchange ${L1}: `)),
        expect.stringMatching(/^write-lvmd-config: /),
      ],
    });
    expect(runtime).toContain(path.join(REPO, "provider", "runtime", "v1", "index.ts"));
    expect((result.inputs.agents as Record<string, { token: unknown }>)[NODE]!.token).toEqual(secret(token));
    expect(plainOccurrences(result, token)).toEqual([]);
    // check is a dry run
    expect(commandLog(scratch.path("commands.jsonl")).slice(before).filter(isWrite)).toEqual([]);
    expect(pvs([L1])).toEqual([]);
  });
});
