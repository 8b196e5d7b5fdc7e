/**
 * Reviewed changes against a real kube-apiserver and a REAL agent on loop devices: a device that
 * appears later in a wipe-enabled wildcard group is not wiped until someone approves the exact plan
 * the LVMNode shows (approvalPolicy Destructive, the default).
 *
 *   npx jest test/operator/approval --runInBand
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { run as approve } from "../../src/cli/approve";
import { run as status } from "../../src/cli/status";
import type { Json } from "../env/cluster";
import { startAgentCluster, type AgentCluster } from "./agent-cluster";
import { conditionOf, lvmNodeWaits } from "./lvmnode-waits";
import { eventually, lvmNodesPath, must, setsPath, sleep } from "./env";

jest.setTimeout(180_000);

const NS = "storage";
const RESYNC_MS = 2000;
const VG = `apr-${randomBytes(3).toString("hex")}`;
let c: AgentCluster;

beforeAll(async () => {
  c = await startAgentCluster({
    nodes: ["n1"],
    devices: 1,
    namespaces: [NS],
    resyncMs: RESYNC_MS,
    plainHttp: true,
    events: true,
  });
}, 120_000);
afterAll(async () => c?.stop());

const n1 = () => lvmNodeWaits(c, NS, "n1");
const lvmNode = () => n1().read();
const wipes = () => n1().wipes();
const annotate = (hash: string) =>
  must(c.cp, "PATCH", lvmNodesPath(NS, "n1"), {
    metadata: { annotations: { "lvm.topolvm.io/approve": hash } },
  });
const events = async (reason: string): Promise<Json[]> =>
  (await must(c.cp, "GET", `/apis/events.k8s.io/v1/namespaces/${NS}/events`)).items.filter(
    (e: Json) => e.reason === reason && e.regarding?.name === "n1",
  );

test("a hot-plugged xfs device: shown waiting with its UUID, never wiped unapproved; a stale approval is refused; the right one wipes once", async () => {
  await must(c.cp, "POST", setsPath(NS), {
    apiVersion: "lvm.topolvm.io/v2alpha1",
    kind: "LVMNodeSet",
    metadata: { name: "wild", namespace: NS },
    spec: {
      template: {
        volumeGroups: [
          {
            name: VG,
            minDeviceSize: "64Mi",
            forceWipeDevicesAndDestroyAllData: true,
            deviceSelector: {
              deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "Any" }] }],
            },
          },
        ],
      },
    },
  });
  // The group's first build on a blank device goes ahead under Destructive.
  await n1().readyWith(1);

  // Hot-plug: a device with an xfs filesystem appears on the node (the agent restarts seeing it).
  const s = c.scratch.n1!;
  const extra = s.loop(320); // mkfs.xfs makes nothing under 300 MiB
  execFileSync("mkfs.xfs", ["-q", "-f", extra]);
  const uuid = execFileSync("blkid", ["-s", "UUID", "-o", "value", extra]).toString().trim();
  await c.restartAgent("n1");

  const waiting = await n1().planWaiting();
  const pending = waiting.status.pendingApproval;
  const wipe = pending.steps.find((x: Json) => x.op === "wipefs");
  expect(wipe).toMatchObject({ device: extra, erases: [expect.objectContaining({ type: "xfs", uuid })] });
  expect(pending.claims).toEqual([expect.stringContaining(`${VG}: ${extra}`)]);
  expect(conditionOf(waiting, "AwaitingApproval")).toMatchObject({
    status: "True",
    reason: "ApprovalRequired",
  });
  expect(conditionOf(waiting, "Ready")).toMatchObject({ status: "False", reason: "AwaitingApproval" });
  const awaitingGauge = `pulumi_lvm_lvmnode_awaiting_approval{namespace="${NS}",lvmnode="n1"} 1`;
  expect(await c.op.metrics.render(0, c.op.operator.lvmNodeGauges())).toContain(awaitingGauge);

  // Three resyncs: nothing wiped, the status not rewritten, one Event.
  await sleep(3 * RESYNC_MS + 500);
  expect(wipes()).toEqual([]);
  const later = await lvmNode();
  expect(later.metadata.resourceVersion).toBe(waiting.metadata.resourceVersion);
  expect(await events("AwaitingApproval")).toHaveLength(1);

  // A stale approval: refused, naming the plan that waits now; still nothing wiped.
  await annotate("0000stale");
  const refused = await n1().staleApprovalRefused();
  expect(conditionOf(refused, "AwaitingApproval").message).toContain(`the plan now is ${pending.hash}`);
  expect(wipes()).toEqual([]);

  // The CLI, through a kubeconfig: a stale hash is refused naming the waiting one (exit 1); the
  // waiting plan's hash is approved (exit 0), then applied: exactly one wipe, recorded, removed.
  const cli = async (hash: string) => {
    const out: string[] = [];
    const code = await approve({
      argv: ["--node", "n1", "--hash", hash, "--kubeconfig", c.cp.kubeconfigFor("admin")],
      readFile: async () => "",
      stdout: (t) => out.push(t),
      stderr: (t) => out.push(t),
    });
    return { code, out: out.join("") };
  };
  // `pulumi-lvm status` through the same kubeconfig shows the waiting plan's hash and says why (exit 3).
  const shown: string[] = [];
  const statusCode = await status({
    argv: ["--namespace", NS, "-o", "wide", "--kubeconfig", c.cp.kubeconfigFor("admin")],
    readFile: async () => "",
    stdout: (t) => shown.push(t),
    stderr: (t) => shown.push(t),
  });
  expect({ statusCode, text: shown.join("") }).toEqual({
    statusCode: 3,
    text: expect.stringMatching(
      new RegExp(`n1\\s+wild\\s+\\S+\\s+.*${pending.hash}[\\s\\S]*node n1: AwaitingApproval True`),
    ),
  });
  const staleCli = await cli("0000stale");
  expect(staleCli.code).toBe(1);
  expect(staleCli.out).toContain(`the plan waiting now is ${pending.hash}`);
  expect(await cli(pending.hash)).toEqual({
    code: 0,
    out: expect.stringContaining(`approved plan ${pending.hash} of LVMNode ${NS}/n1`),
  });
  const done = await n1().approvedAndApplied(2);
  expect(wipes().map((x) => x.requested)).toEqual([expect.arrayContaining([extra])]);
  expect(wipes()).toHaveLength(1);
  expect(done.status.lastApproval).toMatchObject({ hash: pending.hash });
  await eventually(
    "the awaiting-approval gauge cleared",
    async () => !(await c.op.metrics.render(0, c.op.operator.lvmNodeGauges())).includes(awaitingGauge),
    10_000,
    200,
  );
  await n1().approvalRemoved();
  await sleep(2 * RESYNC_MS);
  expect(wipes()).toHaveLength(1);
});
