import { execFileSync, spawnSync } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import type { LVMNodeSpec } from "../../src/api";
import { agentClient, AgentCallError } from "../../src/agent-client/agent-client";
import { httpTransport } from "../../src/kube/http";
import {
  credentialsIdOf,
  installScript,
  inventoryScript,
  type AgentHostScriptInput,
} from "../../src/components/agent-host-script";
import { parseAgentOutput } from "../../src/components/agent-host";
import { planInventories } from "../../provider/runtime/v1/inventory-plans";
import { UNKNOWN } from "../../provider/runtime/v1/index";
import { lvm, requireHostTier, Scratch, vgs } from "../agent/host-lvm";
import { freePort } from "../net";
import { copyLocally, prepareLocally } from "./local-flow";

/**
 * The script HostInventory runs over SSH, run here by sh on this machine: the installed release's
 * `pulumi-lvm inventory` (a real bundle from scripts/agent-bundle.sh, installed by AgentHost's install
 * script under a scratch root, its agent running on two loop devices of this test's own). Shows that
 * the plan made purely from what it prints is the running agent's own plan (the same hash), and that
 * the agent refuses that plan once the disks changed. Nothing here applies a plan: the agent's
 * lvmd.yaml path is this machine's default, which a test must not write.
 */
const repo = path.resolve(__dirname, "../..");
const NODE = "edge-1";
let scratch: Scratch;
let bundle: string;
let input: AgentHostScriptInput;
let endpoint: { node: string; url: string; token: string; ca: string };
const client = agentClient(httpTransport);

const spec = (): LVMNodeSpec => ({
  volumeGroups: [
    {
      name: "vg-inventory-test",
      deviceSelector: {
        deviceSelectorTerms: [
          { matchExpressions: [{ key: "kname", operator: "In", values: scratch.loops }] },
        ],
      },
    },
  ],
});

beforeAll(async () => {
  requireHostTier();
  scratch = new Scratch("agent-host-inventory");
  // Over the default minDeviceSize (1Gi); sparse files.
  scratch.loop(1200);
  scratch.loop(1200);
  bundle = execFileSync("bash", [path.join(repo, "scripts/agent-bundle.sh"), scratch.path("bundle.tgz")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
  const root = scratch.path("root");
  fs.mkdirSync(root);
  input = {
    node: NODE,
    bundleHash: crypto.createHash("sha256").update(fs.readFileSync(bundle)).digest("hex"),
    credentialsId: credentialsIdOf(""),
    port: await freePort(),
    certificateNames: ["127.0.0.1"],
    sudo: false,
    nodeMajor: 20,
    devices: scratch.loops,
    root,
  };
}, 600_000);

afterAll(() => {
  const pidFile = path.join(input?.root ?? "/nonexistent", "opt/pulumi-lvm/agent.pid");
  if (fs.existsSync(pidFile))
    spawnSync("sh", ["-c", 'kill -TERM -"$1"', "sh", fs.readFileSync(pidFile, "utf8").trim()]);
  scratch?.cleanup();
});

const runInventory = () =>
  spawnSync("/bin/sh", ["-c", inventoryScript(input)], { encoding: "utf8", timeout: 120_000 });

test("before AgentHost installed the release: exit 3, a message naming the node, nothing printed", () => {
  const r = runInventory();
  expect(r.status).toBe(3);
  expect(r.stdout).toBe("");
  expect(r.stderr).toContain(`pulumi-lvm HostInventory ${NODE}: pulumi-lvm is not installed at`);
});

test("the printed inventory plans exactly as the running agent does: the same claims and the same hash", async () => {
  const dir = prepareLocally(input.root!);
  copyLocally(dir, bundle);
  const url = `https://127.0.0.1:${input.port}`;
  const install = spawnSync("/bin/sh", ["-c", installScript(input, url, dir)], {
    encoding: "utf8",
    timeout: 180_000,
  });
  expect(install.status).toBe(0);
  const agent = parseAgentOutput(NODE, install.stdout, url);
  endpoint = {
    node: NODE,
    url,
    token: agent.token,
    ca: agent.caCertificate,
  };

  const r = runInventory();
  expect(r.stderr).toBe(""); // -q: stdout carries only the JSON
  expect(r.status).toBe(0);
  const printed = JSON.parse(r.stdout) as { nodes: Array<{ name: string; agentPlanOptions: unknown }> };
  expect(printed.nodes.map((n) => n.name)).toEqual([NODE]);
  expect(printed.nodes[0]!.agentPlanOptions).toMatchObject({ adoptOrphanPvs: [] });

  const planned = planInventories([NODE], { [NODE]: r.stdout }, { [NODE]: r.stdout }, spec(), UNKNOWN);
  expect(planned.failures).toEqual([]);
  const plan = planned.plans[NODE]!;
  expect(plan.claimed.sort()).toEqual(
    scratch.loops.map((d) => `${d} → vg-inventory-test (new volume group)`).sort(),
  );
  const agentPlan = await client.plan(endpoint, spec());
  expect(plan.hash).toBe(agentPlan.hash);
}, 240_000);

test("after the disks changed, the agent refuses the plan made from the old inventory, and changes nothing", async () => {
  const before = { [NODE]: runInventory().stdout };
  const old = planInventories([NODE], before, before, spec(), UNKNOWN).plans[NODE]!;
  // Someone else makes the first disk a physical volume (the test's own lvm, not the agent).
  lvm(scratch.loops, ["pvcreate", "--yes", scratch.loops[0]!]);
  const refused = await client.apply(endpoint, spec(), old.hash).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(refused).toBeInstanceOf(AgentCallError);
  expect(refused).toMatchObject({ status: 409, code: "PlanChanged" });
  expect(vgs(scratch.loops)).toEqual([]);
  // A fresh inventory shows the change (the disk is left out, and why), with the agent's hash again.
  const fresh = runInventory();
  expect(fresh.status).toBe(0);
  const after = { [NODE]: fresh.stdout };
  const now = planInventories([NODE], after, after, spec(), UNKNOWN).plans[NODE]!;
  expect(now.hash).not.toBe(old.hash);
  expect(now.excluded).toEqual([expect.stringContaining(`${scratch.loops[0]}: `)]);
  expect(now.hash).toBe((await client.plan(endpoint, spec())).hash);
}, 240_000);
