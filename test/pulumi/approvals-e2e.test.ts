/**
 * A NodeSet's `approvals` end to end: the real engine and the REAL Kubernetes provider
 * (pulumi-resource-kubernetes 4.32.0, test/pulumi/install-kubernetes.sh) against a real
 * kube-apiserver, the real operator and a REAL agent on loop devices (test/operator/agent-cluster.ts).
 * A device hot-plugged with an xfs filesystem into a wipe-enabled wildcard group waits for an
 * approval; `pulumi up` with a stale hash wipes nothing (the operator says which hash waits); with
 * the waiting plan's hash it wipes exactly once; an up after that, and one with the approval
 * removed, change nothing on the node; an approval for a node that has no LVMNode fails the up and
 * creates nothing. The operator's admission webhook is not in this harness: its
 * refusals are test/operator/admission.test.ts's.
 *
 * Missing binaries (the CLI, the plugin, the apiserver, lvm) are a failure saying how to get them.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Json } from "../env/cluster";
import { startAgentCluster, type AgentCluster } from "../operator/agent-cluster";
import { lvmNodesPath, sleep } from "../operator/env";
import { conditionOf, lvmNodeWaits } from "../operator/lvmnode-waits";
import { PulumiWorkspace, requirePulumiBinaries } from "./cli";
import { requireKubernetesPlugin } from "./kubernetes-plugin";

jest.setTimeout(600_000);

const NS = "storage";
const RESYNC_MS = 2000;
const VG = `pap-${randomBytes(3).toString("hex")}`;
const LONG = { timeoutMs: 300_000 };
let c: AgentCluster;
let ws: PulumiWorkspace;
let scratch: string;

beforeAll(async () => {
  requirePulumiBinaries();
  const plugin = requireKubernetesPlugin();
  c = await startAgentCluster({
    nodes: ["n1"],
    devices: 1,
    namespaces: [NS],
    resyncMs: RESYNC_MS,
    plainHttp: true,
  });
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-approvals-e2e-"));
  ws = new PulumiWorkspace("approvals", randomBytes(12).toString("hex"), {
    root: scratch,
    programDir: path.join(__dirname, "approvals-program"),
    plugins: [plugin],
  });
  ws.init();
  ws.ok(["config", "set", "--secret", "kubeconfig"], {
    input: fs.readFileSync(c.cp.kubeconfigFor("admin"), "utf8"),
  });
  ws.ok(["config", "set", "namespace", NS]);
  ws.ok(["config", "set", "volumeGroup", VG]);
}, 300_000);

// No `pulumi destroy`: the set's deletion waits for the operator's finalizer, and the operator runs
// in this process, which a pulumi command (spawnSync) holds; the control plane goes with the test.
afterAll(async () => {
  await c?.stop();
  ws?.cleanup();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

const n1 = () => lvmNodeWaits(c, NS, "n1");
const wipes = () => n1().wipes();
const approve = (hash: string) => ws.ok(["config", "set", "--path", "approvals.n1", hash]);

test("pulumi up approves exactly the hash the program names: a stale one wipes nothing, the waiting one wipes once", async () => {
  ws.ok(["up", "--yes", "--skip-preview"], LONG);
  // The group's first build on a blank device does not wait (approvalPolicy Destructive, the default).
  await n1().readyWith(1);

  // Hot-plug: a device with an xfs filesystem appears on the node.
  const extra = c.scratch.n1!.loop(320); // mkfs.xfs makes nothing under 300 MiB
  execFileSync("mkfs.xfs", ["-q", "-f", extra]);
  await c.restartAgent("n1");
  const pending = (await n1().planWaiting()).status.pendingApproval;
  expect(pending.steps.map((s: Json) => s.op)).toContain("wipefs");

  // A hash that is not the waiting plan's: the patch is applied, the operator applies nothing.
  const stale = "0".repeat(64);
  approve(stale);
  const staleUp = ws.ok(["up", "--yes", "--skip-preview"], LONG);
  expect(staleUp.output).toMatch(/\+ .*kubernetes:lvm\.topolvm\.io\/v2alpha1:LVMNodePatch.*wild-approve-n1/);
  const refused = await n1().staleApprovalRefused();
  expect(conditionOf(refused, "AwaitingApproval").message).toContain(`the plan now is ${pending.hash}`);
  await sleep(2 * RESYNC_MS);
  expect(wipes()).toEqual([]);

  // The waiting plan's hash: applied, exactly one wipe, recorded as used.
  approve(pending.hash);
  const preview = ws.ok(["preview", "--diff"], LONG).output;
  expect(preview).toContain(pending.hash);
  expect(preview).toContain(stale);
  ws.ok(["up", "--yes", "--skip-preview"], LONG);
  const done = await n1().approvedAndApplied(2);
  expect(done.status.lastApproval).toMatchObject({ hash: pending.hash });
  expect(wipes().map((x) => x.requested)).toEqual([expect.arrayContaining([extra])]);
  await n1().approvalRemoved();

  // Up again with the same config: nothing to do. Then with the approval removed: its patch goes,
  // and nothing on the node changes.
  expect(ws.ok(["preview", "--diff"], LONG).output).not.toMatch(/LVMNodePatch.*\n.*(update|create|delete)/);
  ws.ok(["config", "rm", "--path", "approvals.n1"]);
  const removed = ws.ok(["up", "--yes", "--skip-preview"], LONG).output;
  expect(removed).toMatch(/- .*kubernetes:lvm\.topolvm\.io\/v2alpha1:LVMNodePatch.*wild-approve-n1.*deleted/);
  await sleep(2 * RESYNC_MS);
  expect(wipes()).toHaveLength(1);
  const after = await n1().read();
  expect(after.status?.volumeGroups?.[0]?.devices?.included).toHaveLength(2);
  expect(after.metadata.annotations?.["lvm.topolvm.io/approve"]).toBeUndefined();

  // A node with no LVMNode (a typo): a server-side apply would create the object, and the API server
  // refuses one without a spec. The up fails naming it, and no LVMNode appears.
  ws.ok(["config", "set", "--path", "approvals.n9", pending.hash]);
  const typo = ws.run(["up", "--yes", "--skip-preview"], LONG);
  expect(typo.code).not.toBe(0);
  expect(typo.output).toMatch(
    /LVMNodePatch \(wild-approve-n9\):\s+error: .*LVMNode\.lvm\.topolvm\.io "n9" is invalid: \[spec: Required value/,
  );
  expect((await c.cp.request("GET", lvmNodesPath(NS, "n9"))).status).toBe(404);
  ws.ok(["config", "rm", "--path", "approvals.n9"]);
});
