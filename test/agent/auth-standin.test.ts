/**
 * Authentication and authorization of a real agent process against a STAND-IN for the Kubernetes
 * API server: a small HTTPS server in this test that answers TokenReview and SubjectAccessReview
 * the way kube-apiserver does (it is not one; auth-apiserver.test.ts runs the real one). The agent
 * itself serves HTTPS (--tls-cert/--tls-key) and reaches the stand-in through a kubeconfig.
 */
import * as fs from "node:fs";
import * as https from "node:https";
import type { AddressInfo } from "node:net";
import {
  commandLog,
  makeTls,
  request,
  requireHostTier,
  Scratch,
  startAgent,
  writeKubeconfig,
  type AgentProcess,
} from "./harness";
import { nodeAudience } from "../../src/agent-api/auth";

jest.setTimeout(120_000);

/** The only audience an agent accepts by default since tokens are per node (issue 12, item 5). */
const AUDIENCE = nodeAudience("node-auth");
const AGENT_OWN_TOKEN = "agent-service-account-token";
/** Bearer tokens the stand-in knows: token → [user, groups, audiences it is bound to]. */
const TOKENS: Record<string, [string, string[], string[]]> = {
  "tok-operator": [
    "system:serviceaccount:pulumi-lvm-system:operator",
    ["system:serviceaccounts"],
    [AUDIENCE],
  ],
  "tok-viewer": ["viewer", ["devs"], [AUDIENCE]],
  "tok-wrong-audience": [
    "system:serviceaccount:pulumi-lvm-system:operator",
    ["system:serviceaccounts"],
    ["https://kubernetes.default.svc"],
  ],
};
/** Who may update which LVMNode: the stand-in's RBAC. */
const ALLOWED = new Set([
  "system:serviceaccount:pulumi-lvm-system:operator|update|lvm.topolvm.io|lvmnodes|node-auth|lvm-system",
]);

let scratch: Scratch;
let standIn: https.Server;
let agent: AgentProcess | undefined;
let ca: string;
const reviews: Array<{ path: string; auth: string | undefined; spec: any }> = []; // eslint-disable-line @typescript-eslint/no-explicit-any -- parsed JSON, checked field by field

beforeAll(async () => {
  requireHostTier();
  scratch = new Scratch("auth-standin");
  const tls = makeTls(scratch.dir);
  ca = fs.readFileSync(tls.ca, "utf8");
  standIn = https.createServer(
    { cert: fs.readFileSync(tls.cert), key: fs.readFileSync(tls.key) },
    (req, res) => {
      let text = "";
      req.on("data", (c) => (text += c));
      req.on("end", () => {
        const body = JSON.parse(text);
        reviews.push({ path: req.url!, auth: req.headers.authorization, spec: body.spec });
        if (req.headers.authorization !== `Bearer ${AGENT_OWN_TOKEN}`) {
          res.writeHead(401).end("{}");
          return;
        }
        let status: unknown;
        if (body.spec.token === "tok-api-server-breaks") {
          res
            .writeHead(500, { "content-type": "text/plain" })
            .end("etcdserver: leader changed; internal detail 5ecret-1nternal-host:2379");
          return;
        }
        if (req.url === "/apis/authentication.k8s.io/v1/tokenreviews") {
          const known = TOKENS[body.spec.token];
          const audiences = (body.spec.audiences ?? []).filter((a: string) => known?.[2].includes(a));
          status =
            known && audiences.length
              ? { authenticated: true, user: { username: known[0], groups: known[1] }, audiences }
              : { authenticated: false, error: "invalid bearer token" };
        } else if (req.url === "/apis/authorization.k8s.io/v1/subjectaccessreviews") {
          const a = body.spec.resourceAttributes;
          const allowed = ALLOWED.has(
            [body.spec.user, a.verb, a.group, a.resource, a.name, a.namespace].join("|"),
          );
          status = allowed
            ? { allowed: true, reason: "RBAC: allowed" }
            : { allowed: false, reason: "no RBAC policy matched" };
        }
        res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ ...body, status }));
      });
    },
  );
  await new Promise<void>((r) => standIn.listen(0, "127.0.0.1", r));
  writeKubeconfig(
    scratch.path("kubeconfig"),
    `https://127.0.0.1:${(standIn.address() as AddressInfo).port}`,
    tls.ca,
    AGENT_OWN_TOKEN,
  );
  const L1 = scratch.loop();
  agent = await startAgent({
    node: "node-auth",
    devices: [L1],
    ...scratch.agentFiles(),
    auth: { kubeconfig: scratch.path("kubeconfig") },
    extraArgs: ["--tls-cert", tls.cert, "--tls-key", tls.key, "--auth-cache-ttl", "2s"],
  });
});

afterAll(async () => {
  await agent?.stop();
  await new Promise<void>((r) => (standIn ? standIn.close(() => r()) : r()));
  scratch?.cleanup();
});

const get = (token?: string) => request(agent!.url, "GET", "/v1/status", { ca, ...(token ? { token } : {}) });
const commands = () => commandLog(scratch.path("commands.jsonl")).length;

describe("agent auth against a TokenReview/SubjectAccessReview stand-in (not a real API server)", () => {
  it("serves HTTPS with the given certificate", () => {
    expect(agent!.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it("401 with WWW-Authenticate and no review without a token", async () => {
    const before = { reviews: reviews.length, commands: commands() };
    const res = await get();
    expect(res.status).toBe(401);
    expect(res.headers["www-authenticate"]).toBe('Bearer realm="pulumi-lvm-agent"');
    expect({ reviews: reviews.length, commands: commands() }).toEqual(before);
  });

  it("401 for a token the TokenReview does not accept, and for one bound to another audience; no lvm command", async () => {
    const before = commands();
    expect((await get("tok-unknown")).status).toBe(401);
    const wrong = await get("tok-wrong-audience");
    expect(wrong.status).toBe(401);
    expect(commands()).toBe(before);
    const review = reviews.find((r) => r.spec.token === "tok-wrong-audience")!;
    expect(review).toMatchObject({
      path: "/apis/authentication.k8s.io/v1/tokenreviews",
      auth: `Bearer ${AGENT_OWN_TOKEN}`,
    });
    expect(review.spec.audiences).toEqual([AUDIENCE]);
  });

  it("403 when the SubjectAccessReview denies update on this node's LVMNode; no lvm command", async () => {
    const before = commands();
    const res = await get("tok-viewer");
    expect(res.status).toBe(403);
    expect(res.json.error.message).toMatch(
      /user "viewer" may not update lvmnodes.lvm.topolvm.io\/node-auth in namespace lvm-system: no RBAC policy matched/,
    );
    expect(commands()).toBe(before);
    const sar = reviews.filter((r) => r.path.endsWith("subjectaccessreviews")).at(-1)!;
    expect(sar.spec).toEqual({
      user: "viewer",
      groups: ["devs"],
      resourceAttributes: {
        verb: "update",
        group: "lvm.topolvm.io",
        resource: "lvmnodes",
        name: "node-auth",
        namespace: "lvm-system",
      },
    });
  });

  it("200 for a user allowed to update this node's LVMNode", async () => {
    const res = await get("tok-operator");
    expect(res.status).toBe(200);
    expect(res.json.node).toBe("node-auth");
  });

  it("caches decisions briefly: no second review within the TTL, a fresh one after it", async () => {
    await get("tok-operator");
    const before = reviews.length;
    await get("tok-operator");
    await get("tok-viewer");
    expect(reviews.length).toBe(before);
    await new Promise((r) => setTimeout(r, 2100));
    await get("tok-operator");
    expect(reviews.length).toBe(before + 2);
  });

  it("503 with a generic message when the API server fails: its response body and URL go to the log, not to the caller", async () => {
    const res = await get("tok-api-server-breaks");
    expect(res.status).toBe(503);
    expect(res.json.error.code).toBe("AuthUnavailable");
    const port = String((standIn.address() as AddressInfo).port);
    expect(res.text).not.toContain("5ecret-1nternal-host");
    expect(res.text).not.toContain("etcdserver");
    expect(res.text).not.toContain(port);
    expect(res.text).not.toContain("tokenreviews");
    const logged = await agent!.waitForLog((e) => JSON.stringify(e).includes("5ecret-1nternal-host"));
    expect(JSON.stringify(logged)).toContain("tokenreviews");
  });

  it("503 when the API server cannot be reached; no lvm command", async () => {
    await new Promise<void>((r) => standIn.close(() => r()));
    standIn.closeAllConnections();
    const before = commands();
    const res = await get("tok-never-seen");
    expect(res.status).toBe(503);
    expect(res.json.error.code).toBe("AuthUnavailable");
    expect(commands()).toBe(before);
  });
});
