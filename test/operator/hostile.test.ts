/**
 * The operator against LVMNodes and agents that are not what they claim (issue 12): a real
 * kube-apiserver, REAL agents on loop devices for n1 and n2, and, for n3, a stand-in agent (an
 * HTTP server in this process, named so) that answers what a broken or hostile agent would.
 * Then (issue 36) an LVMNode-only user and a widened older set, with no admission in front of the
 * API server (as when the webhook is down or bypassed): the operator alone must hold; n4 has a
 * real agent and no set selects it.
 *
 *   npx jest test/operator/hostile --selectProjects integration
 */
import type * as http from "node:http";
import * as https from "node:https";
import type { AddressInfo } from "node:net";
import type { Json } from "../env/cluster";
import { commandLog, isWrite, lvm, membersOf } from "../agent/harness";
import { startAgentCluster, type AgentCluster } from "./agent-cluster";
import { eventually, lvmNodesPath, must, setsPath, sleep } from "./env";

jest.setTimeout(240_000);

const NS = "storage";
const TENANT = "tenant-b";
const OTHER = "other";
const RESYNC_MS = 3000;
const VG = `hst-${Math.random().toString(16).slice(2, 8)}`;
/** The operator's deselection grace: a forged LVMNode lives this long before its set deletes it. */
const GRACE_MS = 5000;

let c: AgentCluster;
const standIn = { mode: "wrongStatus" as StandInMode, requests: [] as string[] };
type StandInMode = "wrongStatus" | "failing" | "busy" | "html";
let standInServer: http.Server;
/** Stand-in agents of h1 and h2: they plan one step, and never answer /v1/apply. */
const hanging: http.Server[] = [];
const applies: string[] = [];

beforeAll(async () => {
  c = await startAgentCluster({
    nodes: ["n1", "n2", "n4"],
    namespaces: [NS, TENANT, OTHER],
    resyncMs: RESYNC_MS,
    deselectionGraceMs: GRACE_MS,
  });
  // n4: a real agent, selected by no set.
  await must(c.cp, "PATCH", "/api/v1/nodes/n4", { metadata: { labels: { role: "spare" } } });
  // tenant-b/old selects nobody, and is older than storage/fast (created by the first test).
  await must(c.cp, "POST", setsPath(TENANT), nodeSet(TENANT, "old", "nobody"));
  await sleep(1100);
  // The LVMNode-only user: every verb on lvmnodes in storage, nothing on lvmnodesets.
  await must(c.cp, "POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, {
    metadata: { name: "lvmnodes-only" },
    rules: [{ apiGroups: ["lvm.topolvm.io"], resources: ["lvmnodes"], verbs: ["*"] }],
  });
  await must(c.cp, "POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
    metadata: { name: "lvmnodes-only" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "lvmnodes-only" },
    subjects: [{ kind: "User", name: c.cp.identities.unprivileged.username }],
  });
  await c.cp.createNode("n3", { role: "lying" });
  // The stand-ins serve HTTPS with the agents' shared serving key, as a hostile node's agent could.
  standInServer = https.createServer({ cert: c.tls!.cert, key: c.tls!.key }, (req, res) => {
    req.resume();
    req.on("end", () => {
      standIn.requests.push(`${req.method} ${req.url}`);
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      const plan = { node: "n3", selected: true, volumeGroups: [], actions: [], blocked: [] };
      const planBody = { ...plan, lvmd: { "device-classes": [] }, hash: "stand-in" };
      switch (standIn.mode) {
        case "wrongStatus":
          // A plan for n3, but the status of n1 (Ready): must not be taken for n3's.
          if (req.url?.endsWith("/v1/plan")) return json(200, planBody);
          return json(200, { node: "n1", status: { state: "Ready", volumeGroups: [], conditions: [] } });
        case "failing":
          return json(500, { error: { code: "CommandFailed", message: "vgs failed: the disk is gone" } });
        case "busy":
          return json(409, {
            error: { code: "OperationInProgress", message: "another operation is running" },
          });
        case "html":
          res.writeHead(200, { "content-type": "text/html" });
          return res.end("<html><body>Welcome to nginx!</body></html>");
      }
    });
  });
  await new Promise<void>((r) => standInServer.listen(0, "127.0.0.1", r));
  await c.agentPod("n3", (standInServer.address() as AddressInfo).port);
}, 240_000);

afterAll(async () => {
  for (const h of hanging) {
    h.closeAllConnections();
    h.close();
  }
  standInServer?.close();
  await c?.stop();
});

const devices = (node: string) => c.scratch[node]!.loops;
const agentWrites = (node: string) => commandLog(c.scratch[node]!.path("commands.jsonl")).filter(isWrite);
const reconciled = (o: Json) => (o?.status?.conditions ?? []).find((x: Json) => x.type === "Reconciled");
const getLVMNode = async (ns: string, name: string) =>
  (await c.cp.request("GET", lvmNodesPath(ns, name))).body;

function nodeSet(ns: string, name: string, role: string, template: Json = {}): Json {
  return {
    apiVersion: "lvm.topolvm.io/v2alpha1",
    kind: "LVMNodeSet",
    metadata: { name, namespace: ns },
    spec: {
      nodeSelector: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: "role", operator: "In", values: [role] }] }],
      },
      template: {
        volumeGroups: [
          {
            name: VG,
            minDeviceSize: "64Mi",
            deviceSelector: {
              deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "Any" }] }],
            },
          },
        ],
        deviceClasses: [{ name: `${VG}-thick`, strategy: "Thick", volumeGroup: VG, default: true }],
        ...template,
      },
    },
  };
}

describe("item 1: an LVMNode the operator did not make", () => {
  test("is never sent to an agent, and deleting it (deletionPolicy Delete) tears nothing down", async () => {
    await must(c.cp, "POST", setsPath(NS), nodeSet(NS, "fast", "storage"));
    await eventually(
      "storage/fast built on n1 and n2",
      async () => ["n1", "n2"].every((n) => membersOf(devices(n), VG).length === 2),
      90_000,
      200,
    );
    await eventually(
      "storage/n1 and n2 in sync",
      async () => {
        for (const n of ["n1", "n2"])
          if (reconciled(await getLVMNode(NS, n))?.reason !== "InSync") return false;
        return true;
      },
      60_000,
      200,
    );
    const own = await getLVMNode(NS, "n1");
    const teardowns = () => c.agents.n1!.logs.filter((e) => e.msg === "request" && e.path === "/v1/teardown");
    const writesBefore = agentWrites("n1").length;
    // A tenant with rights on lvmnodes in its own namespace only copies n1's spec, asks for Delete.
    await must(c.cp, "POST", lvmNodesPath(TENANT), {
      apiVersion: "lvm.topolvm.io/v2alpha1",
      kind: "LVMNode",
      metadata: { name: "n1", namespace: TENANT },
      spec: { ...own.spec, deletionPolicy: "Delete" },
    });
    const refused = await eventually(
      "tenant-b/n1 reported NotManaged",
      async () => {
        const o = await getLVMNode(TENANT, "n1");
        return reconciled(o)?.reason === "NotManaged" ? o : undefined;
      },
      4 * RESYNC_MS,
      200,
    ).catch(async (e: Error) => {
      throw new Error(`${e.message}; its status: ${JSON.stringify((await getLVMNode(TENANT, "n1")).status)}`);
    });
    expect(reconciled(refused)).toMatchObject({
      status: "False",
      message: expect.stringContaining(
        "LVMNode tenant-b/n1 is not controlled by an LVMNodeSet this operator reconciles (no controller)",
      ),
    });
    expect(refused.metadata.finalizers ?? []).toEqual([]);
    await must(c.cp, "DELETE", lvmNodesPath(TENANT, "n1"));
    await eventually(
      "tenant-b/n1 gone",
      async () => (await c.cp.request("GET", lvmNodesPath(TENANT, "n1"))).status === 404,
      30_000,
    );
    await sleep(2 * RESYNC_MS);
    expect(membersOf(devices("n1"), VG)).toHaveLength(2);
    expect(teardowns()).toEqual([]);
    expect(
      agentWrites("n1")
        .slice(writesBefore)
        .map((w) => w.requested.join(" ")),
    ).toEqual([]);
    expect(reconciled(await getLVMNode(NS, "n1"))).toMatchObject({ status: "True" });
  });
});

describe("item 3: two sets selecting the same node", () => {
  test("only the older set's LVMNode is applied; the other reports NodeSetOverlap; no thrash", async () => {
    // other/late wants only n2's first device in the same volume group. Created at the same instant
    // as storage/fast's, its LVMNode other/n2 exists too (made here as the race makes it).
    const late = await must(
      c.cp,
      "POST",
      setsPath(OTHER),
      nodeSet(OTHER, "late", "storage", {
        volumeGroups: [
          {
            name: VG,
            deviceSelector: {
              deviceSelectorTerms: [
                { matchExpressions: [{ key: "path", operator: "In", values: [devices("n2")[0]] }] },
              ],
            },
          },
        ],
      }),
    );
    await must(c.cp, "POST", lvmNodesPath(OTHER), {
      apiVersion: "lvm.topolvm.io/v2alpha1",
      kind: "LVMNode",
      metadata: {
        name: "n2",
        namespace: OTHER,
        ownerReferences: [
          {
            apiVersion: "lvm.topolvm.io/v2alpha1",
            kind: "LVMNodeSet",
            name: "late",
            uid: late.metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: late.spec.template,
    });
    const writesBefore = agentWrites("n2").length;
    const overlap = await eventually(
      "other/n2 reported NodeSetOverlap",
      async () => {
        const o = await getLVMNode(OTHER, "n2");
        return reconciled(o)?.reason === "NodeSetOverlap" ? o : undefined;
      },
      4 * RESYNC_MS,
      200,
    ).catch(async (e: Error) => {
      throw new Error(`${e.message}; its status: ${JSON.stringify((await getLVMNode(OTHER, "n2")).status)}`);
    });
    expect(reconciled(overlap).message).toContain(
      "node n2 is also selected by LVMNodeSet storage/fast (LVMNode storage/n2), which keeps it (its LVMNode was there first)",
    );
    await sleep(3 * RESYNC_MS);
    const writes = agentWrites("n2").slice(writesBefore);
    expect(writes.map((w) => w.tool)).toEqual([]);
    expect(membersOf(devices("n2"), VG)).toHaveLength(2);
    expect(reconciled(await getLVMNode(NS, "n2"))).toMatchObject({ status: "True" });
    const lateStatus = (await must(c.cp, "GET", setsPath(OTHER, "late"))).status;
    expect(lateStatus.conditions.find((x: Json) => x.type === "LVMNodesReady")).toMatchObject({
      reason: "NodeSetOverlap",
    });
    await must(c.cp, "DELETE", setsPath(OTHER, "late"));
    await eventually(
      "other/late gone",
      async () => (await c.cp.request("GET", setsPath(OTHER, "late"))).status === 404,
      30_000,
    );
    expect(membersOf(devices("n2"), VG)).toHaveLength(2);
  });
});

describe("item 6: a status that would lie (stand-in agent on n3)", () => {
  const lies = async (reason: string, contains: string) =>
    eventually(
      `storage/n3 Reconciled ${reason} with "${contains}"`,
      async () => {
        const o = await getLVMNode(NS, "n3");
        const r = reconciled(o);
        return r?.reason === reason && String(r.message).includes(contains) ? o : undefined;
      },
      5 * RESYNC_MS,
      200,
    ).catch(async (e: Error) => {
      throw new Error(`${e.message}; its status: ${JSON.stringify((await getLVMNode(NS, "n3"))?.status)}`);
    });

  test("a /v1/status answered for n1 is not taken for n3's", async () => {
    standIn.mode = "wrongStatus";
    await must(c.cp, "POST", setsPath(NS), nodeSet(NS, "lying", "lying"));
    const o = await lies("AgentFailed", "was answered by the agent of node n1, not of LVMNode storage/n3");
    expect(o.status.state).not.toBe("Ready");
  });

  test("an error, then 409 OperationInProgress forever: the error does not stay shown", async () => {
    standIn.mode = "failing";
    await lies("AgentFailed", "CommandFailed: vgs failed: the disk is gone");
    standIn.mode = "busy";
    const o = await lies("AgentBusy", "OperationInProgress");
    expect(JSON.stringify(o.status.conditions)).not.toContain("the disk is gone");
  });

  test("an answer that is not JSON: the message says so", async () => {
    standIn.mode = "html";
    await lies(
      "AgentFailed",
      'a body that is not JSON (starts "<html><body>Welcome to nginx!</body></html>")',
    );
  });
});

describe("item 4: agents that never answer an apply", () => {
  test("two hung applies do not stop the operator from serving the other nodes", async () => {
    for (const node of ["h1", "h2"]) {
      const server = https.createServer({ cert: c.tls!.cert, key: c.tls!.key }, (req, res) => {
        req.resume();
        req.on("end", () => {
          if (req.url?.endsWith("/v1/apply")) return void applies.push(node); // never answered
          res.writeHead(200, { "content-type": "application/json" });
          res.end(
            JSON.stringify({
              node,
              selected: true,
              volumeGroups: [],
              actions: [{ op: "vgcreate", argv: ["vgcreate", VG, "/dev/sdz"], reason: "stand-in" }],
              blocked: [],
              lvmd: { "device-classes": [] },
              hash: "stand-in",
            }),
          );
        });
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      hanging.push(server);
      await c.cp.createNode(node, { role: "hung" });
      await c.agentPod(node, (server.address() as AddressInfo).port);
    }
    await must(c.cp, "POST", setsPath(NS), nodeSet(NS, "hung", "hung"));
    await eventually("both applies in flight", async () => applies.length >= 2, 30_000, 100);
    // n1 drifts: the resync must still get to it and repair it.
    const [, second] = devices("n1");
    lvm(devices("n1"), ["vgreduce", VG, second!]);
    const t0 = Date.now();
    await eventually(
      "n1 repaired while h1 and h2 hang",
      async () => membersOf(devices("n1"), VG).length === 2,
      6 * RESYNC_MS,
      200,
    );
    console.log(`n1 repaired in ${Date.now() - t0} ms with 2 applies hung (2 workers)`);
    expect(applies.sort()).toEqual(["h1", "h2"]); // each hung apply sent once, never a second time
  });
});

describe("issue 36, no admission in front: an LVMNode-only user and a widened older set", () => {
  const user = () => c.cp.tokens.unprivileged;
  const requests = (node: string, path: string) =>
    c.agents[node]!.logs.filter((e) => e.msg === "request" && e.path === path).length;

  test("item 10: storage/n4 with storage/fast's genuine controller reference (fast does not select n4): nothing runs on n4", async () => {
    const fast = await must(c.cp, "GET", setsPath(NS, "fast"));
    expect(await c.cp.request("GET", setsPath(NS), undefined, user())).toMatchObject({ status: 403 });
    const created = await c.cp.request(
      "POST",
      lvmNodesPath(NS),
      {
        apiVersion: "lvm.topolvm.io/v2alpha1",
        kind: "LVMNode",
        metadata: {
          name: "n4",
          namespace: NS,
          ownerReferences: [
            {
              apiVersion: "lvm.topolvm.io/v2alpha1",
              kind: "LVMNodeSet",
              name: "fast",
              uid: fast.metadata.uid,
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        spec: {
          volumeGroups: [
            {
              name: `${VG}-own`,
              minDeviceSize: "64Mi",
              deviceSelector: {
                deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "Any" }] }],
              },
            },
          ],
          deletionPolicy: "Delete",
        },
      },
      user(),
    );
    expect(created.status).toBe(201); // nothing in front of the API server here
    // The set deletes it once n4 has been out of its selector for the grace period.
    await eventually(
      "storage/n4 deleted by its set",
      async () => (await c.cp.request("GET", lvmNodesPath(NS, "n4"))).status === 404,
      GRACE_MS + 8 * RESYNC_MS,
      200,
    );
    await sleep(RESYNC_MS);
    const writes = agentWrites("n4").map((w) => w.requested.join(" "));
    console.log(`n4's lvm writes: ${writes.length ? writes.join("; ") : "none"}`);
    expect(writes).toEqual([]);
    expect([requests("n4", "/v1/apply"), requests("n4", "/v1/teardown")]).toEqual([0, 0]);
    expect(c.op.logs).toContainEqual(
      expect.objectContaining({ msg: "not driven", lvmNode: `${NS}/n4`, reason: "NotSelected" }),
    );
  });

  test("item 12: spec.deletionPolicy patched to Delete, then the LVMNode deleted: the set's Retain holds", async () => {
    const before = await getLVMNode(NS, "n2");
    const writesBefore = agentWrites("n2").length;
    const patched = await c.cp.request(
      "PATCH",
      lvmNodesPath(NS, "n2"),
      { spec: { deletionPolicy: "Delete" } },
      user(),
    );
    expect(patched.status).toBe(200);
    expect((await c.cp.request("DELETE", lvmNodesPath(NS, "n2"), undefined, user())).status).toBe(200);
    await eventually(
      "storage/n2 re-created by its set and in sync",
      async () => {
        const o = await getLVMNode(NS, "n2");
        return o?.metadata?.uid !== before.metadata.uid && reconciled(o)?.reason === "InSync";
      },
      GRACE_MS + 10 * RESYNC_MS,
      200,
    );
    const writes = agentWrites("n2")
      .slice(writesBefore)
      .map((w) => w.requested.join(" "));
    console.log(`n2's lvm writes: ${writes.length ? writes.join("; ") : "none"}`);
    expect(writes).toEqual([]);
    expect(membersOf(devices("n2"), VG)).toHaveLength(2);
  });

  test("item 11: tenant-b/old (older than fast) widened onto fast's nodes: fast keeps them and still repairs n1", async () => {
    await must(c.cp, "PATCH", setsPath(TENANT, "old"), {
      spec: {
        nodeSelector: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: "role", operator: "In", values: ["storage"] }] }],
        },
      },
    });
    await eventually(
      "tenant-b/old reconciled with its new selector",
      async () => {
        const o = await must(c.cp, "GET", setsPath(TENANT, "old"));
        return o.status?.observedGeneration === o.metadata.generation;
      },
      4 * RESYNC_MS,
      200,
    );
    await sleep(2 * RESYNC_MS);
    for (const n of ["n1", "n2"])
      expect([n, reconciled(await getLVMNode(NS, n))?.reason]).toEqual([n, "InSync"]);
    const old = await must(c.cp, "GET", setsPath(TENANT, "old"));
    expect(old.status.conditions.find((x: Json) => x.type === "LVMNodesReady")).toMatchObject({
      reason: "NodeSetOverlap",
    });
    const [, second] = devices("n1");
    lvm(devices("n1"), ["vgreduce", VG, second!]);
    await eventually(
      "n1's drift repaired by storage/fast",
      async () => membersOf(devices("n1"), VG).length === 2,
      6 * RESYNC_MS,
      200,
    );
    await must(c.cp, "DELETE", setsPath(TENANT, "old"));
  });
});
