/**
 * Admission (issue 17) against the real kube-apiserver: the ValidatingAdmissionPolicy and the
 * ValidatingWebhookConfiguration exactly as LvmSystem makes them (src/agent-api/admission.ts),
 * the API server calling the operator's webhook server (in this process, 127.0.0.1) over TLS with a
 * certificate issued like LvmSystem issues it (src/components/agent-certificates.ts), and the operator
 * itself running as its service account (a token-authenticated system:serviceaccount user).
 *
 *   npx jest test/operator/admission --runInBand
 */
import * as fs from "node:fs";
import * as https from "node:https";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import type { Server } from "node:https";
import YAML from "yaml";
import { validateFile } from "../../src/cli/validate";
import { issueAgentCertificates } from "../../src/components/agent-certificates";
import { systemClock } from "../../src/kube/clock";
import { createKubeClient } from "../../src/kube/client";
import {
  DELETION_GUARD_LABEL,
  deletionGuard,
  LVMNODE_WRITERS_MESSAGE,
  lvmNodeOwnerPolicy,
  NOT_CONTROLLED_MESSAGE,
  webhookConfiguration,
} from "../../src/agent-api/admission";
import { AdmissionCache } from "../../src/operator/admission/reads";
import { createWebhookServer } from "../../src/operator/admission/server";
import { startOperator, type RunningOperator } from "../../src/operator/main";
import { ControlPlane, Json, startControlPlane } from "../env/cluster";
import {
  eventually,
  lvmNodes,
  lvmNodesPath,
  must,
  nodeSet,
  prepareCluster,
  setsPath,
  sleep,
  startTestOperator,
  type TestOperator,
} from "./env";

jest.setTimeout(60_000);

let cp: ControlPlane;
let op: TestOperator;
let certDir: string;
let webhook: Server | undefined;
let port = 0;
const reviews: Array<{ kind: string; allowed: boolean | "error"; seconds: number }> = [];
const NS = "storage";
const WEBHOOK_NAME = "pulumi-lvm-operator";

/** The webhook's requests to the API server other than its watches. */
const webhookReads: string[] = [];
let stopCache: AbortController | undefined;

async function startWebhook(): Promise<void> {
  const kube = createKubeClient({
    connection: { server: cp.url, token: () => cp.tokens.operator, ca: () => cp.caPem },
    onRequest: (r) => r.verb !== "WATCH" && webhookReads.push(`${r.verb} ${r.resource}`),
  });
  stopCache = new AbortController();
  const cache = new AdmissionCache({ kube, clock: systemClock });
  void cache.run(stopCache.signal);
  await eventually("the webhook's caches are filled", async () => cache.synced, 20_000, 50);
  const server = createWebhookServer({
    certDir,
    reads: cache.reads,
    clock: systemClock,
    log: () => undefined,
    onReview: (kind, allowed, seconds) => reviews.push({ kind, allowed, seconds }),
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
  port = (server.address() as AddressInfo).port;
  webhook = server;
}

async function stopWebhook(): Promise<void> {
  stopCache?.abort();
  const server = webhook;
  webhook = undefined;
  if (server)
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
}

/** A hand-made LVMNode (no ownerReferences unless given). */
const lvmNode = (ns: string, name: string, ownerReferences?: Json[]) => ({
  apiVersion: "lvm.topolvm.io/v2alpha1",
  kind: "LVMNode",
  metadata: { name, namespace: ns, ...(ownerReferences ? { ownerReferences } : {}) },
  spec: nodeSet(ns, "x", []).spec.template,
});

beforeAll(async () => {
  cp = await startControlPlane();
  await prepareCluster(cp);
  for (const ns of [NS, "team-b"]) await must(cp, "POST", "/api/v1/namespaces", { metadata: { name: ns } });
  await cp.createNode("n1", { role: "storage" });
  await cp.createNode("n2", { role: "storage" });
  await cp.createNode("n3", { role: "compute" });

  // The serving certificate as LvmSystem generates it, for the name the API server dials.
  const issued = await issueAgentCertificates({ serverName: "localhost" });
  certDir = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-lvm-webhook-"));
  fs.writeFileSync(path.join(certDir, "tls.crt"), issued.cert);
  fs.writeFileSync(path.join(certDir, "tls.key"), issued.key, { mode: 0o600 });
  fs.writeFileSync(path.join(certDir, "ca.crt"), issued.caCert);
  await startWebhook();

  const operatorUsername = cp.identities.operator.username;
  const { policy, binding } = lvmNodeOwnerPolicy({ name: "pulumi-lvm-lvmnode-owner", operatorUsername });
  const admission = "/apis/admissionregistration.k8s.io/v1";
  await must(cp, "POST", `${admission}/validatingadmissionpolicies`, policy);
  await must(cp, "POST", `${admission}/validatingadmissionpolicybindings`, binding);
  await must(
    cp,
    "POST",
    `${admission}/validatingwebhookconfigurations`,
    webhookConfiguration({
      name: WEBHOOK_NAME,
      clientConfig: { url: `https://localhost:${port}` },
      caBundle: issued.caCert,
      operatorUsername,
    }),
  );
  // Policies and webhooks take effect once the API server's own informers have them.
  await eventually(
    "the policy refuses a hand-made LVMNode",
    async () => {
      const r = await cp.request("POST", lvmNodesPath("team-b"), lvmNode("team-b", "probe"));
      if (r.status === 201) await must(cp, "DELETE", lvmNodesPath("team-b", "probe"));
      return r.status === 403;
    },
    20_000,
    200,
  );
  await eventually(
    "the webhook is called",
    async () => {
      const r = await cp.request(
        "POST",
        setsPath("team-b"),
        nodeSet("team-b", "probe", ["nobody"]),
        undefined,
      );
      if (r.status === 201) await must(cp, "DELETE", setsPath("team-b", "probe"));
      return reviews.length > 0;
    },
    20_000,
    200,
  );
  // team-b/early selects nobody and is older than storage/fast (created by the first test).
  await must(cp, "POST", setsPath("team-b"), nodeSet("team-b", "early", ["nobody"]));
  // The LVMNode-only user: every verb on lvmnodes in storage, nothing on lvmnodesets.
  await must(cp, "POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, {
    metadata: { name: "lvmnodes-only" },
    rules: [{ apiGroups: ["lvm.topolvm.io"], resources: ["lvmnodes"], verbs: ["*"] }],
  });
  await must(cp, "POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
    metadata: { name: "lvmnodes-only" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "lvmnodes-only" },
    subjects: [{ kind: "User", name: cp.identities.unprivileged.username }],
  });
  op = startTestOperator(cp);
  await eventually("caches synced", async () => op.operator.ready);
  await sleep(1100);
}, 120_000);

afterAll(async () => {
  await op?.stop();
  await stopWebhook();
  await cp?.stop();
  if (certDir) fs.rmSync(certDir, { recursive: true, force: true });
});

const denied = (r: { status: number; body: Json }) =>
  `${r.status} ${r.body?.message ?? JSON.stringify(r.body)}`;

describe("the webhook, called by the API server over TLS", () => {
  test("a valid set passes; the operator's own LVMNodes pass the policy and never reach the webhook", async () => {
    const before = reviews.length;
    const r = await cp.request("POST", setsPath(NS), nodeSet(NS, "fast", ["storage"]));
    expect(r.status).toBe(201);
    expect(reviews.slice(before)).toEqual([expect.objectContaining({ kind: "LVMNodeSet", allowed: true })]);
    const nodes = await eventually("the operator created both LVMNodes", async () => {
      const m = await lvmNodes(cp, NS);
      return m.size === 2 ? m : undefined;
    });
    expect([...nodes.keys()].sort()).toEqual(["n1", "n2"]);
    expect(reviews.slice(before).filter((x) => x.kind === "LVMNode")).toEqual([]);
  });

  test("an overlapping set is refused with the nodes and the set that has them, in any namespace", async () => {
    for (const ns of [NS, "team-b"]) {
      const r = await cp.request("POST", setsPath(ns), nodeSet(ns, "wide", ["storage", "compute"]));
      expect(denied(r)).toBe(
        `422 admission webhook "lvmnodesets.lvm.topolvm.io" denied the request: LVMNodeSet/wide: spec.nodeSelector: selects nodes n1 and n2, which LVMNodeSet ${NS}/fast already selects; a node belongs to at most one node set`,
      );
    }
    // The nodes no other set selects are free.
    const ok = await cp.request("POST", setsPath("team-b"), nodeSet("team-b", "compute", ["compute"]));
    expect(ok.status).toBe(201);
  });

  test("a rule the CRD's CEL cannot express is refused with pulumi-lvm validate's own lines", async () => {
    const set = nodeSet("team-b", "two-thick", ["nobody"]);
    set.spec.template.deviceClasses = [
      { name: "a", strategy: "Thick", volumeGroup: "vg1" },
      { name: "b", strategy: "Thick", volumeGroup: "vg1" },
    ];
    const file = path.join(certDir, "two-thick.yaml");
    fs.writeFileSync(file, YAML.stringify(set));
    const lines = await validateFile(
      file,
      { readFile: (f) => fs.promises.readFile(f, "utf8"), stderr: () => {} },
      false,
    );
    expect(lines.length).toBeGreaterThan(0);
    const r = await cp.request("POST", setsPath("team-b"), set);
    expect(denied(r)).toBe(
      `422 admission webhook "lvmnodesets.lvm.topolvm.io" denied the request: ${lines.map((l) => l.slice(`${file}: `.length)).join("\n")}`,
    );
  });

  test("a hand-made LVMNode, or one naming a set (by any uid), is refused by the policy; with the policy unbound, by the webhook", async () => {
    const bare = await cp.request("POST", lvmNodesPath(NS), lvmNode(NS, "n3"));
    expect(bare.status).toBe(403);
    expect(bare.body.message).toContain(NOT_CONTROLLED_MESSAGE);

    const fast = await must(cp, "GET", setsPath(NS, "fast"));
    const ref = (name: string, uid: string) => [
      { apiVersion: "lvm.topolvm.io/v2alpha1", kind: "LVMNodeSet", name, uid, controller: true },
    ];
    for (const owner of [ref("fast", "0000-forged"), ref("gone", "1234"), ref("fast", fast.metadata.uid)]) {
      const r = await cp.request("POST", lvmNodesPath(NS), lvmNode(NS, "n3", owner));
      expect(r.status).toBe(403);
      expect(r.body.message).toContain(LVMNODE_WRITERS_MESSAGE);
    }

    // The webhook refuses the same on its own (a cluster without the policy, or the policy unbound).
    const bindings = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings";
    const { binding } = lvmNodeOwnerPolicy({
      name: "pulumi-lvm-lvmnode-owner",
      operatorUsername: cp.identities.operator.username,
    });
    await must(cp, "DELETE", `${bindings}/${binding.metadata.name}`);
    try {
      const r = await eventually(
        "the webhook answers alone",
        async () => {
          const x = await cp.request(
            "POST",
            lvmNodesPath(NS),
            lvmNode(NS, "n3", ref("fast", fast.metadata.uid)),
          );
          if (x.status === 201) throw new Error(`admitted: ${JSON.stringify(x.body)}`);
          return String(x.body?.message).includes("admission webhook") ? x : undefined;
        },
        20_000,
        200,
      );
      expect(denied(r)).toBe(
        `403 admission webhook "lvmnodes.lvm.topolvm.io" denied the request: LVMNode/n3: metadata: ${LVMNODE_WRITERS_MESSAGE}`,
      );
    } finally {
      await must(cp, "POST", bindings, binding);
    }
    await eventually(
      "the policy bound again",
      async () =>
        String((await cp.request("POST", lvmNodesPath(NS), lvmNode(NS, "n3"))).body?.message).includes(
          NOT_CONTROLLED_MESSAGE,
        ),
      20_000,
      200,
    );
  });

  test("the operator's identity may write what others may not", async () => {
    const r = await cp.request("POST", lvmNodesPath("team-b"), lvmNode("team-b", "n9"), cp.tokens.operator);
    expect(r.status).toBe(201);
    await must(cp, "DELETE", lvmNodesPath("team-b", "n9"));
  });

  test("a person's edit of a LVMNode's spec is refused (not controlled any more is not possible either)", async () => {
    const n1 = await must(cp, "GET", lvmNodesPath(NS, "n1"));
    const orphan = await cp.request("PATCH", lvmNodesPath(NS, "n1"), { metadata: { ownerReferences: null } });
    expect(orphan.status).toBe(403);
    expect(orphan.body.message).toContain(NOT_CONTROLLED_MESSAGE);
    // A label by hand passes: no spec change, the webhook is not called; the policy sees the controller.
    const labelled = await cp.request("PATCH", lvmNodesPath(NS, "n1"), {
      metadata: { labels: { note: "x" } },
    });
    expect(labelled.status).toBe(200);
    expect(labelled.body.metadata.ownerReferences).toEqual(n1.metadata.ownerReferences);
  });
});

describe("issue 36: who may write LVMNodes, and nodes another set already selects", () => {
  const user = () => cp.tokens.unprivileged;
  const fastRef = async (name = "fast") => {
    const set = await must(cp, "GET", setsPath(NS, name));
    return [
      {
        apiVersion: "lvm.topolvm.io/v2alpha1",
        kind: "LVMNodeSet",
        name,
        uid: set.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ];
  };

  test("item 10: an LVMNode-only user's POST of storage/n3 with fast's genuine controller reference is refused", async () => {
    const r = await cp.request("POST", lvmNodesPath(NS), lvmNode(NS, "n3", await fastRef()), user());
    expect(denied(r)).toMatch(
      /^403 .*LVMNodes are created, and their spec and ownerReferences changed, only by the pulumi-lvm operator/,
    );
    expect((await cp.request("GET", lvmNodesPath(NS, "n3"))).status).toBe(404);
  });

  test("item 10: that user's spec change of storage/n1 is refused", async () => {
    const r = await cp.request(
      "PATCH",
      lvmNodesPath(NS, "n1"),
      { spec: { deletionPolicy: "Delete" } },
      user(),
    );
    expect(denied(r)).toMatch(/^403 .*only by the pulumi-lvm operator/);
    expect((await must(cp, "GET", lvmNodesPath(NS, "n1"))).spec.deletionPolicy).toBeUndefined();
  });

  test("item 15: a metadata-only swap of the controller reference to another set is refused", async () => {
    expect((await cp.request("POST", setsPath(NS), nodeSet(NS, "spare", ["nobody"]))).status).toBe(201);
    const r = await cp.request(
      "PATCH",
      lvmNodesPath(NS, "n1"),
      { metadata: { ownerReferences: await fastRef("spare") } },
      user(),
    );
    expect(denied(r)).toMatch(/^403 .*only by the pulumi-lvm operator/);
    expect((await must(cp, "GET", lvmNodesPath(NS, "n1"))).metadata.ownerReferences).toEqual(await fastRef());
    await must(cp, "DELETE", setsPath(NS, "spare"));
  });

  test("approving: a caller without the verb approve gets 403 naming the ClusterRole; a stale hash is refused naming the waiting one", async () => {
    // A service account that may patch LVMNodes but not approve (no wildcard verb).
    await must(cp, "POST", `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: "no-approve" } });
    await must(cp, "POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, {
      metadata: { name: "no-approve" },
      rules: [{ apiGroups: ["lvm.topolvm.io"], resources: ["lvmnodes"], verbs: ["get", "patch"] }],
    });
    await must(cp, "POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
      metadata: { name: "no-approve" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "no-approve" },
      subjects: [{ kind: "ServiceAccount", name: "no-approve", namespace: NS }],
    });
    const token = (
      await must(cp, "POST", `/api/v1/namespaces/${NS}/serviceaccounts/no-approve/token`, {
        spec: { expirationSeconds: 600 },
      })
    ).status.token;
    const approve = (hash: string, as?: string) =>
      cp.request(
        "PATCH",
        lvmNodesPath(NS, "n1"),
        { metadata: { annotations: { "lvm.topolvm.io/approve": hash } } },
        as,
      );
    const refused = await approve("abc", token);
    expect(denied(refused)).toMatch(
      /^403 admission webhook "lvmnode-approvals.lvm.topolvm.io" denied the request: .*system:serviceaccount:storage:no-approve may not approve .*verb approve on lvmnodes.*ClusterRole pulumi-lvm-approver/,
    );
    // A plan waiting (as the operator shows it): another hash is refused, naming it; its own passes.
    const pending = { hash: "h-waiting", policy: "Destructive", since: "2044-10-22T16:29:24Z", steps: [] };
    const w = await cp.request(
      "PATCH",
      `${lvmNodesPath(NS, "n1")}/status`,
      { status: { pendingApproval: pending } },
      cp.tokens.operator,
    );
    expect(w.status).toBe(200);
    const stale = await approve("h-old");
    expect(denied(stale)).toMatch(/^409 .*the approval h-old is stale: the plan waiting now is h-waiting/);
    expect((await approve("h-waiting")).status).toBe(200);
    await must(cp, "PATCH", lvmNodesPath(NS, "n1"), {
      metadata: { annotations: { "lvm.topolvm.io/approve": null } },
    });
  });

  test("item 11: an older set widening its selector onto another set's nodes is refused", async () => {
    const early = await must(cp, "GET", setsPath("team-b", "early"));
    const fast = await must(cp, "GET", setsPath(NS, "fast"));
    expect(Date.parse(early.metadata.creationTimestamp)).toBeLessThan(
      Date.parse(fast.metadata.creationTimestamp),
    );
    const r = await cp.request("PATCH", setsPath("team-b", "early"), {
      spec: {
        nodeSelector: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: "role", operator: "In", values: ["storage"] }] }],
        },
      },
    });
    expect(denied(r)).toBe(
      `422 admission webhook "lvmnodesets.lvm.topolvm.io" denied the request: LVMNodeSet/early: spec.nodeSelector: selects nodes n1 and n2, which LVMNodeSet ${NS}/fast already selects; a node belongs to at most one node set`,
    );
  });
});

/**
 * A stand-in for TopoLVM's LogicalVolume CRD (topolvm.io/v1, cluster-scoped, a status subresource;
 * the schema left open): the API server serves the objects as with the real one.
 */
const LOGICAL_VOLUME_CRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "logicalvolumes.topolvm.io" },
  spec: {
    group: "topolvm.io",
    scope: "Cluster",
    names: {
      kind: "LogicalVolume",
      listKind: "LogicalVolumeList",
      plural: "logicalvolumes",
      singular: "logicalvolume",
    },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
      },
    ],
  },
};
const LVS = "/apis/topolvm.io/v1/logicalvolumes";
const PVS = "/api/v1/persistentvolumes";

/** A LogicalVolume as TopoLVM makes one for PV `name` on `node` (status.volumeID: the LV's name). */
async function logicalVolume(name: string, node: string, deviceClass: string): Promise<void> {
  await must(cp, "POST", LVS, {
    apiVersion: "topolvm.io/v1",
    kind: "LogicalVolume",
    metadata: { name },
    spec: { name, nodeName: node, deviceClass, size: "1Gi" },
  });
  await must(cp, "PATCH", `${LVS}/${name}/status`, {
    status: { volumeID: `lv-${name}`, currentSize: "1Gi" },
  });
}

/** Its PersistentVolume, Bound to the claim `namespace/claim` (the phase as the PV controller sets it). */
async function boundPersistentVolume(name: string, namespace: string, claim: string): Promise<void> {
  await must(cp, "POST", PVS, {
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: { name },
    spec: {
      capacity: { storage: "1Gi" },
      accessModes: ["ReadWriteOnce"],
      persistentVolumeReclaimPolicy: "Delete",
      storageClassName: "lvms-thin",
      csi: { driver: "topolvm.io", volumeHandle: `lv-${name}`, fsType: "xfs" },
      claimRef: { apiVersion: "v1", kind: "PersistentVolumeClaim", namespace, name: claim },
    },
  });
  await must(cp, "PATCH", `${PVS}/${name}/status`, { status: { phase: "Bound" } });
}

describe("deleting a set with deletionPolicy Delete (issue 16, 6b)", () => {
  const DELETE_NS = "vaults";
  const deleting = (name: string, role: string) => {
    const set = nodeSet(DELETE_NS, name, [role]);
    set.spec.template.deletionPolicy = "Delete";
    return set;
  };
  const gone = (name: string) =>
    eventually(
      `${DELETE_NS}/${name} gone`,
      async () => (await cp.request("GET", setsPath(DELETE_NS, name))).status === 404,
    );
  const withLvmNode = async (name: string, role: string, node: string) => {
    await cp.createNode(node, { role });
    expect((await cp.request("POST", setsPath(DELETE_NS), deleting(name, role))).status).toBe(201);
    await eventually(`the operator created LVMNode ${DELETE_NS}/${node}`, async () =>
      (await lvmNodes(cp, DELETE_NS)).has(node),
    );
  };

  beforeAll(async () => {
    await must(cp, "POST", "/api/v1/namespaces", { metadata: { name: DELETE_NS } });
  });

  test("TopoLVM's API not installed (no LogicalVolume CRD): the deletion passes the webhook", async () => {
    expect((await cp.request("GET", LVS)).status).toBe(404);
    await withLvmNode("scratch", "scratch", "n6");
    const before = reviews.length;
    expect((await cp.request("DELETE", setsPath(DELETE_NS, "scratch"))).status).toBe(200);
    // Reviewed and allowed, once or more: the API server reviews a deletion again when it retries it
    // on a conflict (the operator writes the new set's status meanwhile; a CI run saw two reviews).
    const seen = reviews.slice(before);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen).toEqual(seen.map(() => expect.objectContaining({ kind: "LVMNodeSet", allowed: true })));
    await gone("scratch");
  });

  test("refused while a LogicalVolume with a bound PV is in its volume group, naming it all; the set stays; passes once they are gone", async () => {
    await must(cp, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", LOGICAL_VOLUME_CRD);
    await eventually("LogicalVolumes served", async () => (await cp.request("GET", LVS)).status === 200);
    await withLvmNode("vault", "vault", "n5");
    // One on this set's node in its volume group (TopoLVM's "" is the default class), one on a
    // node of another set: only the first is named.
    await logicalVolume("pvc-vault-1", "n5", "");
    await boundPersistentVolume("pvc-vault-1", "default", "data-vault-0");
    await logicalVolume("pvc-fast-1", "n1", "thin");
    await boundPersistentVolume("pvc-fast-1", "default", "data-fast-0");
    const before = await must(cp, "GET", setsPath(DELETE_NS, "vault"));

    const refused = await cp.request("DELETE", setsPath(DELETE_NS, "vault"));
    expect(denied(refused)).toBe(
      `422 admission webhook "lvmnodeset-deletions.lvm.topolvm.io" denied the request: LVMNodeSet/vault: spec.template.deletionPolicy: is Delete, but volume group vg1 on node n5 still holds logical volume lv-pvc-vault-1 (TopoLVM LogicalVolume pvc-vault-1, PersistentVolume pvc-vault-1 of claim default/data-vault-0): delete the PVC default/data-vault-0, then destroy again (pulumi destroy, or delete LVMNodeSet ${DELETE_NS}/vault)`,
    );
    // A refusal changes nothing: the same object, not Terminating, its LVMNode there.
    const after = await must(cp, "GET", setsPath(DELETE_NS, "vault"));
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.metadata.deletionTimestamp).toBeUndefined();
    expect((await lvmNodes(cp, DELETE_NS)).has("n5")).toBe(true);

    // The Topolvm component's deletion guard (deleted first by pulumi destroy): the same refusal.
    const guard = deletionGuard({
      name: "topolvm-deletion-guard",
      namespace: DELETE_NS,
      nodeSets: ["vault"],
    });
    await must(cp, "POST", `/api/v1/namespaces/${DELETE_NS}/configmaps`, guard);
    const guardPath = `/api/v1/namespaces/${DELETE_NS}/configmaps/topolvm-deletion-guard`;
    const guardRefused = await cp.request("DELETE", guardPath);
    expect(denied(guardRefused)).toBe(
      `422 admission webhook "deletion-guards.lvm.topolvm.io" denied the request: ${refused.body.message.split("denied the request: ")[1]}`,
    );
    expect((await cp.request("GET", guardPath)).status).toBe(200);

    // The claim deleted: TopoLVM deletes the PV's LogicalVolume, then the PV goes.
    await must(cp, "DELETE", `${LVS}/pvc-vault-1`);
    await must(cp, "DELETE", `${PVS}/pvc-vault-1`);
    // The webhook's list of volumes may be up to a second old (reads.ts): a refusal meanwhile changes nothing.
    await eventually(
      "the guard's deletion passes once the volume is gone",
      async () => (await cp.request("DELETE", guardPath)).status === 200,
      5000,
      200,
    );
    expect((await cp.request("DELETE", setsPath(DELETE_NS, "vault"))).status).toBe(200);
    await gone("vault");
  });

  test("a Retain set's deletion never reaches the webhook, whatever volumes it holds", async () => {
    await cp.createNode("n7", { role: "kept" });
    expect((await cp.request("POST", setsPath(DELETE_NS), nodeSet(DELETE_NS, "kept", ["kept"]))).status).toBe(
      201,
    );
    await logicalVolume("pvc-kept-1", "n7", "thin");
    const before = reviews.length;
    expect((await cp.request("DELETE", setsPath(DELETE_NS, "kept"))).status).toBe(200);
    expect(reviews.slice(before)).toEqual([]);
    await gone("kept");
  });

  test("with no operator answering, the deletion guard stays (failurePolicy Fail): destroy stops before TopoLVM; its label removed, it goes", async () => {
    await withLvmNode("guarded", "guarded", "n9");
    await logicalVolume("pvc-guarded-1", "n9", "thin");
    const guardPath = `/api/v1/namespaces/${DELETE_NS}/configmaps/guarded-deletion-guard`;
    await must(
      cp,
      "POST",
      `/api/v1/namespaces/${DELETE_NS}/configmaps`,
      deletionGuard({ name: "guarded-deletion-guard", namespace: DELETE_NS, nodeSets: ["guarded"] }),
    );
    await stopWebhook();
    try {
      const refused = await cp.request("DELETE", guardPath);
      expect(refused.status).toBe(500);
      expect(refused.body.message).toContain('failed calling webhook "deletion-guards.lvm.topolvm.io"');
      expect((await cp.request("GET", guardPath)).status).toBe(200);
      // The way out, on purpose: without its label the webhook no longer matches it.
      await must(cp, "PATCH", guardPath, { metadata: { labels: { [DELETION_GUARD_LABEL]: null } } });
      expect((await cp.request("DELETE", guardPath)).status).toBe(200);
    } finally {
      await startWebhook();
    }
    await must(cp, "DELETE", `${LVS}/pvc-guarded-1`);
    expect((await cp.request("DELETE", setsPath(DELETE_NS, "guarded"))).status).toBe(200);
    await gone("guarded");
  });

  test("with no operator answering (failurePolicy Ignore), the deletion passes: the set never becomes undeletable", async () => {
    await withLvmNode("orphaned", "orphaned", "n8");
    await logicalVolume("pvc-orphaned-1", "n8", "thin");
    await stopWebhook();
    try {
      expect((await cp.request("DELETE", setsPath(DELETE_NS, "orphaned"))).status).toBe(200);
    } finally {
      await startWebhook();
    }
    await gone("orphaned");
  });
});

describe("while no operator answers (failurePolicy Fail)", () => {
  afterAll(async () => {
    if (!webhook) await startWebhook();
  });

  test("creating or changing a set's spec is refused; labels, finalizers and deletion still pass", async () => {
    await stopWebhook();
    const created = await cp.request("POST", setsPath("team-b"), nodeSet("team-b", "later", ["nobody"]));
    expect(created.status).toBe(500);
    expect(created.body.message).toContain('failed calling webhook "lvmnodesets.lvm.topolvm.io"');
    const labelled = await cp.request("PATCH", setsPath("team-b", "compute"), {
      metadata: { labels: { team: "b" } },
    });
    expect(labelled.status).toBe(200);
    const deleted = await cp.request("DELETE", setsPath("team-b", "compute"));
    expect(deleted.status).toBe(200);
    // The operator (not waiting for any webhook) finishes the deletion: its finalizer goes.
    await eventually(
      "team-b/compute gone",
      async () => (await cp.request("GET", setsPath("team-b", "compute"))).status === 404,
    );
    await startWebhook();
    await eventually(
      "sets can be created again",
      async () => {
        const r = await cp.request("POST", setsPath("team-b"), nodeSet("team-b", "later", ["nobody"]));
        return r.status === 201;
      },
      10_000,
      200,
    );
  });
});

describe("200 forged reviews in flight (anyone who reaches the webhook's port)", () => {
  /**
   * A review as the API server would send it, but forged: a set create, or the deletion of set
   * `fast` (its real uid, so its LVMNodes count) claimed to be a Delete set: the costliest review.
   */
  let fastUid = "";
  const forge = (i: number) =>
    new Promise<number>((resolve) => {
      const set = nodeSet(NS, `forged-${i}`, ["nobody"]);
      if (i % 2) set.spec.template.deletionPolicy = "Delete";
      const body = JSON.stringify({
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        request: {
          uid: `forged-${i}`,
          kind: { group: "lvm.topolvm.io", version: "v2alpha1", kind: "LVMNodeSet" },
          operation: i % 2 ? "DELETE" : "CREATE",
          namespace: NS,
          name: set.metadata.name,
          userInfo: { username: "system:admin" },
          ...(i % 2
            ? { oldObject: { ...set, metadata: { ...set.metadata, name: "fast", uid: fastUid } } }
            : { object: set }),
        },
      });
      const req = https.request(
        {
          host: "127.0.0.1",
          port,
          path: "/validate/lvmnodesets",
          method: "POST",
          ca: fs.readFileSync(path.join(certDir, "ca.crt"), "utf8"),
          servername: "localhost",
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        },
      );
      req.on("error", () => resolve(0));
      req.end(body);
    });

  test("an admin's set create still passes, and the webhook reads the API server ~0 times per forged review", async () => {
    fastUid = (await must(cp, "GET", setsPath(NS, "fast"))).metadata.uid;
    expect((await lvmNodes(cp, NS)).size).toBeGreaterThan(0);
    const before = webhookReads.length;
    const flood = Array.from({ length: 200 }, (_, i) => forge(i));
    const t0 = Date.now();
    const created = await cp.request("POST", setsPath(NS), nodeSet(NS, "during-flood", ["flood-free"]));
    const seconds = (Date.now() - t0) / 1000;
    const answered = await Promise.all(flood);
    const floodSeconds = (Date.now() - t0) / 1000;
    const reads = webhookReads.slice(before);
    console.log(
      `200 forged reviews in flight for ${floodSeconds} s: the admin's create ${created.status} after ${seconds} s; forged answers ${JSON.stringify(countOf(answered))}; the webhook's API reads ${reads.length} (${reads.length / 200} per forged review) ${JSON.stringify(countOf(reads))}`,
    );
    expect(created.status === 201 ? 201 : denied(created)).toBe(201);
    expect(answered.filter((s) => s === 200)).toHaveLength(200);
    // Volumes and PersistentVolumes are read about once a second, whatever the number of reviews.
    expect(reads.length).toBeLessThanOrEqual(2 * Math.ceil(floodSeconds + 1));
    expect(reads.length / 200).toBeLessThan(0.1);
    await must(cp, "DELETE", setsPath(NS, "during-flood"));
  });
});

function countOf<T extends string | number>(list: readonly T[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const x of list) counts[String(x)] = (counts[String(x)] ?? 0) + 1;
  return counts;
}

describe("latency", () => {
  test("the webhook's answers, measured (printed, not asserted)", async () => {
    const before = reviews.length;
    const t: number[] = [];
    for (let i = 0; i < 30; i++) {
      const t0 = process.hrtime.bigint();
      const r = await cp.request("PATCH", setsPath("team-b", "later"), {
        spec: {
          nodeSelector: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: "role", operator: "In", values: [`x${i}`] }] }],
          },
        },
      });
      t.push(Number(process.hrtime.bigint() - t0) / 1e6);
      expect(r.status).toBe(200);
    }
    const server = reviews.slice(before).map((x) => x.seconds * 1000);
    // At least one review per PATCH; the API server reviews again when it retries a patch on a conflict.
    expect(server.length).toBeGreaterThanOrEqual(30);
    const q = (xs: number[], p: number) =>
      [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
    console.log(
      `admission latency (30 spec updates, 3 Nodes, ${os.loadavg()[0]!.toFixed(1)} load): webhook p50 ${q(server, 0.5).toFixed(1)} ms p95 ${q(server, 0.95).toFixed(1)} ms; PATCH round trip p50 ${q(t, 0.5).toFixed(1)} ms p95 ${q(t, 0.95).toFixed(1)} ms`,
    );
  });
});

describe("the subcommand: pulumi-lvm operator --webhook-listen", () => {
  let running: RunningOperator | undefined;
  let dir: string;
  afterAll(async () => {
    await running?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** POSTs an AdmissionReview to the running operator's webhook, trusting only `ca`. */
  const post = (ca: string, object: unknown) =>
    new Promise<Json>((resolve, reject) => {
      const body = JSON.stringify({
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        request: {
          uid: "u-1",
          kind: { group: "lvm.topolvm.io", version: "v2alpha1", kind: "LVMNodeSet" },
          operation: "CREATE",
          namespace: "quiet",
          object,
        },
      });
      const req = https.request(
        `${running!.webhookUrl}/validate/lvmnodesets`,
        {
          method: "POST",
          ca,
          servername: "localhost",
          agent: false,
          headers: { "content-type": "application/json" },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
        },
      );
      req.on("error", reject);
      req.end(body);
    });

  test("serves the webhook from --webhook-cert-dir, counts the reviews, and takes a rotated certificate without a restart", async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-lvm-webhook-cli-"));
    const first = await issueAgentCertificates({ serverName: "localhost" });
    fs.writeFileSync(path.join(dir, "tls.crt"), first.cert);
    fs.writeFileSync(path.join(dir, "tls.key"), first.key);
    fs.writeFileSync(path.join(dir, "token"), cp.tokens.operator);
    fs.writeFileSync(path.join(dir, "ca.pem"), cp.caPem);
    running = await startOperator({
      argv: [
        ...[
          "--server",
          cp.url,
          "--token-file",
          path.join(dir, "token"),
          "--ca-file",
          path.join(dir, "ca.pem"),
        ],
        // a namespace without sets: this operator reconciles nothing next to the test's own
        ...["--namespace", "quiet", "--listen", "127.0.0.1:0", "--agent-token-file", path.join(dir, "token")],
        ...["--webhook-listen", "127.0.0.1:0", "--webhook-cert-dir", dir],
      ],
      env: {},
      log: () => undefined,
    });
    const invalid = nodeSet("quiet", "two-thick", ["nobody"]);
    invalid.spec.template.deviceClasses = [
      { name: "a", strategy: "Thick", volumeGroup: "vg1" },
      { name: "b", strategy: "Thick", volumeGroup: "vg1" },
    ];
    const answer = await post(first.caCert, invalid);
    expect(answer.response).toMatchObject({ uid: "u-1", allowed: false, status: { code: 422 } });
    expect(answer.response.status.message).toMatch(/^LVMNodeSet\/two-thick: spec\.template\.deviceClasses/);
    expect((await post(first.caCert, nodeSet("quiet", "ok", ["nobody"]))).response).toEqual({
      uid: "u-1",
      allowed: true,
    });
    const metrics = await (await fetch(`${running.url}/metrics`)).text();
    expect(metrics).toContain(
      'pulumi_lvm_operator_admission_reviews_total{kind="LVMNodeSet",result="refused"} 1',
    );
    expect(metrics).toContain(
      'pulumi_lvm_operator_admission_reviews_total{kind="LVMNodeSet",result="allowed"} 1',
    );

    // A rotated Secret: new files, new CA; the next connection is served with the new certificate.
    const second = await issueAgentCertificates({ serverName: "localhost" });
    fs.writeFileSync(path.join(dir, "tls.key.new"), second.key);
    fs.writeFileSync(path.join(dir, "tls.crt.new"), second.cert);
    fs.renameSync(path.join(dir, "tls.key.new"), path.join(dir, "tls.key"));
    fs.renameSync(path.join(dir, "tls.crt.new"), path.join(dir, "tls.crt"));
    expect((await post(second.caCert, nodeSet("quiet", "ok", ["nobody"]))).response.allowed).toBe(true);
    await expect(post(first.caCert, nodeSet("quiet", "ok", ["nobody"]))).rejects.toThrow(/certificate/);
  });
});
