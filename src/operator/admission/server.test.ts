/**
 * The webhook server against callers that are not the API server: anyone who reaches its port.
 * A real HTTPS server in this process, its reads an AdmissionCache over a counting fake API server.
 */
import * as fs from "node:fs";
import * as https from "node:https";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import * as tls from "node:tls";
import { WEBHOOK_PATHS } from "../../agent-api/admission";
import { issueAgentCertificates } from "../../components/agent-certificates";
import { systemClock } from "../../kube/clock";
import { LVM_NODE_SETS, LVM_NODES, NODES } from "../../kube/resources";
import { ListingKube } from "../../../test/support/kube/listing-kube";
import { AdmissionCache } from "./reads";
import { createWebhookServer, type WebhookServerOptions } from "./server";

jest.setTimeout(30_000);

let ca: string;
let certDir: string;
let kube: ListingKube;
let cache: AdmissionCache;
const stop = new AbortController();
const logs: Array<Record<string, unknown>> = [];
const servers: https.Server[] = [];

const template = {
  volumeGroups: [
    {
      name: "vg1",
      deviceSelector: {
        deviceSelectorTerms: [{ matchExpressions: [{ key: "path", operator: "In", values: ["/dev/vdb"] }] }],
      },
    },
  ],
  deviceClasses: [{ name: "a", strategy: "Thick", volumeGroup: "vg1", default: true }],
};
const set = (name: string, role: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "lvm.topolvm.io/v2alpha1",
  kind: "LVMNodeSet",
  metadata: { name, namespace: "storage", uid: `uid-${name}`, creationTimestamp: "2026-01-01T00:00:00Z" },
  spec: {
    nodeSelector: {
      nodeSelectorTerms: [{ matchExpressions: [{ key: "role", operator: "In", values: [role] }] }],
    },
    template: { ...template, ...extra },
  },
});
const review = (request: Record<string, unknown>) => ({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: {
    uid: "u-1",
    kind: { group: "lvm.topolvm.io", version: "v2alpha1", kind: "LVMNodeSet" },
    operation: "CREATE",
    namespace: "storage",
    ...request,
  },
});

beforeAll(async () => {
  const issued = await issueAgentCertificates({ serverName: "localhost" });
  ca = issued.caCert;
  certDir = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-lvm-webhook-unit-"));
  fs.writeFileSync(path.join(certDir, "tls.crt"), issued.cert);
  fs.writeFileSync(path.join(certDir, "tls.key"), issued.key, { mode: 0o600 });
  kube = new ListingKube();
  kube.lists.set(LVM_NODE_SETS.plural, [set("fast", "storage", { deletionPolicy: "Delete" })]);
  kube.lists.set(NODES.plural, [
    { metadata: { name: "n1", labels: { role: "storage" } } },
    { metadata: { name: "n2", labels: { role: "compute" } } },
  ]);
  kube.lists.set(LVM_NODES.plural, [
    {
      metadata: {
        name: "n1",
        namespace: "storage",
        ownerReferences: [
          {
            apiVersion: "lvm.topolvm.io/v2alpha1",
            kind: "LVMNodeSet",
            name: "fast",
            uid: "uid-fast",
            controller: true,
          },
        ],
      },
      spec: template,
    } as never,
  ]);
  kube.paths.set("/apis/topolvm.io/v1/logicalvolumes", { items: [] });
  kube.pathDelayMs = 20;
  cache = new AdmissionCache({ kube, clock: systemClock });
  void cache.run(stop.signal);
});

afterAll(async () => {
  stop.abort();
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
  fs.rmSync(certDir, { recursive: true, force: true });
});

async function serve(o: Partial<WebhookServerOptions> = {}): Promise<number> {
  const server = createWebhookServer({
    certDir,
    reads: cache.reads,
    clock: systemClock,
    log: (e) => logs.push(e),
    ...o,
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return (server.address() as AddressInfo).port;
}

interface Answer {
  status: number;
  body: {
    message?: string;
    response?: { uid: string; allowed: boolean; status?: { code: number; message: string } };
  };
}

function post(
  port: number,
  body: string | Buffer,
  headers: Record<string, string> = {},
  at: string = WEBHOOK_PATHS.nodeSets,
) {
  return new Promise<Answer>((resolve, reject) => {
    const req = https.request(
      {
        host: "127.0.0.1",
        port,
        path: at,
        method: "POST",
        ca,
        servername: "localhost",
        headers: Object.fromEntries(
          Object.entries({
            "content-type": "application/json",
            "content-length": String(Buffer.byteLength(body)),
            ...headers,
          }).filter(([, v]) => v !== ""),
        ),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

test("the cache is filled: a review reads it, not the API server", async () => {
  const port = await serve();
  await waitFor(() => cache.synced);
  const before = kube.reads.length;
  const r = await post(port, JSON.stringify(review({ object: set("wide", "storage") })));
  expect(r.body.response).toMatchObject({ uid: "u-1", allowed: false, status: { code: 422 } });
  expect(r.body.response?.status?.message).toContain("which LVMNodeSet storage/fast already selects");
  expect(kube.reads.slice(before)).toEqual([]);
});

describe("malformed and hostile requests: a clear error, nothing reviewed, nothing read", () => {
  let port: number;
  let readsBefore: number;
  beforeAll(async () => {
    port = await serve({ requestTimeoutMs: 1000, bodyBudgetBytes: 5 * 1024 * 1024 });
    await waitFor(() => cache.synced);
  });
  beforeEach(() => (readsBefore = kube.reads.length));
  afterEach(() => expect(kube.reads.slice(readsBefore)).toEqual([]));

  test.each([
    ["not JSON", '{"apiVersion": ', /^not an AdmissionReview: the body is not JSON \(/],
    ["a JSON array", "[]", /^not an AdmissionReview: the body is not an object$/],
    [
      "another apiVersion",
      JSON.stringify({ ...review({}), apiVersion: "admission.k8s.io/v1beta1" }),
      /^not an AdmissionReview: apiVersion "admission.k8s.io\/v1beta1" kind "AdmissionReview": only admission.k8s.io\/v1 AdmissionReview is served$/,
    ],
    [
      "another kind",
      JSON.stringify({ ...review({}), kind: "TokenReview" }),
      /only admission.k8s.io\/v1 AdmissionReview is served$/,
    ],
    [
      "no request",
      JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" }),
      /: no request$/,
    ],
    [
      "no uid",
      JSON.stringify(review({ uid: undefined })),
      /: request.uid is not a string of 1 to 128 characters$/,
    ],
    [
      "a uid of 10,000 characters",
      JSON.stringify(review({ uid: "u".repeat(10_000) })),
      /request.uid is not a string/,
    ],
    ["no kind", JSON.stringify(review({ kind: "LVMNodeSet" })), /: request.kind.kind is not a string$/],
    [
      "an unknown operation",
      JSON.stringify(review({ operation: "DESTROY", object: set("x", "storage") })),
      /: request.operation "DESTROY" is not CREATE, UPDATE, DELETE or CONNECT$/,
    ],
  ])("%s: 400", async (_what, body, message) => {
    const r = await post(port, body);
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(message);
  });

  test("not application/json: 415", async () => {
    const r = await post(port, JSON.stringify(review({})), { "content-type": "text/plain" });
    expect([r.status, r.body.message]).toEqual([415, "an AdmissionReview is sent as application/json"]);
  });

  test("a body over 3 MiB, declared or not: 413 and the connection closed, before it is all read", async () => {
    const big = Buffer.alloc(4 * 1024 * 1024, 0x20);
    const declared = await post(port, big);
    expect([declared.status, declared.body.message]).toEqual([
      413,
      "an AdmissionReview is at most 3145728 bytes",
    ]);
    const chunked = await post(port, big, { "content-length": "", "transfer-encoding": "chunked" });
    expect(chunked.status).toBe(413);
  });

  test("a body sent slowly (slow loris): 408 within the request timeout, not held for minutes", async () => {
    const t0 = Date.now();
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = tls.connect({ host: "127.0.0.1", port, ca, servername: "localhost" }, () => {
        socket.write(
          `POST ${WEBHOOK_PATHS.nodeSets} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"api`,
        );
      });
      let text = "";
      socket.on("data", (d: Buffer) => (text += d.toString()));
      socket.on("close", () => resolve(text));
      socket.on("error", reject);
    });
    expect(answer).toMatch(/^HTTP\/1.1 408 /);
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  test("bodies held at once past the budget: 503 for the one past it; the one held is answered", async () => {
    // 2.9 MiB sent and held open (its last byte not yet), then another 2.9 MiB: past the 5 MiB budget.
    const size = 3 * 1024 * 1024 - 100;
    const held = tls.connect({ host: "127.0.0.1", port, ca, servername: "localhost" });
    let heldAnswer = "";
    held.on("data", (d: Buffer) => (heldAnswer += d.toString()));
    await new Promise((r) => held.once("secureConnect", r));
    held.write(
      `POST ${WEBHOOK_PATHS.nodeSets} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: ${size}\r\n\r\n`,
    );
    await new Promise<void>((r) => held.write(Buffer.alloc(size - 1, 0x20), () => r()));
    await new Promise((r) => setTimeout(r, 300));
    const second = await post(port, Buffer.alloc(size, 0x20));
    expect([second.status, second.body.message]).toEqual([
      503,
      "the webhook holds too many request bodies at once; try again",
    ]);
    held.end(" ");
    await new Promise((r) => held.once("close", r));
    expect(heldAnswer).toMatch(/^HTTP\/1.1 400 [^]*not an AdmissionReview: the body is not JSON/);
  });

  test("another path or method: 404, 405", async () => {
    expect((await post(port, "{}", {}, "/admin")).status).toBe(404);
    const get = await new Promise<number>((resolve) =>
      https.get(
        { host: "127.0.0.1", port, path: WEBHOOK_PATHS.nodeSets, ca, servername: "localhost" },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      ),
    );
    expect(get).toBe(405);
  });
});

test("a forged review's username is logged as claimed, never as the requester, and cut", async () => {
  const port = await serve();
  await waitFor(() => cache.synced);
  logs.length = 0;
  const forged = review({
    uid: "u-forged",
    userInfo: { username: `system:admin${"!".repeat(1000)}` },
    name: "wide",
    object: set("wide", "storage"),
  });
  expect((await post(port, JSON.stringify(forged))).body.response?.allowed).toBe(false);
  expect(logs).toHaveLength(1);
  expect(logs[0]).not.toHaveProperty("user");
  expect(logs[0]).toMatchObject({
    msg: "admission refused",
    claimedUser: `system:admin${"!".repeat(244)}… (1012 characters)`,
  });
});

test("200 forged reviews in flight: the API server is hardly read, and a legitimate review is still answered", async () => {
  const answered: Array<{ seconds: number }> = [];
  const port = await serve({
    // The review's own time in the webhook: from its body's end to its answer, waiting in line included.
    onReview: (_kind, _allowed, seconds) => answered.push({ seconds }),
  });
  await waitFor(() => cache.synced);
  const before = kube.reads.length;
  const forged = (i: number) =>
    JSON.stringify(
      review({
        uid: `forged-${i}`,
        userInfo: { username: "system:admin" },
        // The most expensive kinds: the deletion of a Delete set (volumes, PVs), and a set create.
        ...(i % 2
          ? {
              operation: "DELETE",
              name: "fast",
              oldObject: set("fast", "storage", { deletionPolicy: "Delete" }),
            }
          : { object: set(`forged-${i}`, "nobody") }),
      }),
    );
  const flood = Array.from({ length: 200 }, (_, i) => post(port, forged(i)));
  const t0 = Date.now();
  const admin = await post(port, JSON.stringify(review({ uid: "admin", object: set("mine", "compute") })));
  const adminSeconds = (Date.now() - t0) / 1000;
  const answers = await Promise.all(flood);
  const reads = kube.reads.slice(before);
  const inWebhook = Math.max(...answered.map((a) => a.seconds));
  console.log(
    `200 forged reviews: ${reads.length} API reads (${reads.length / 200} per review) ${JSON.stringify(countBy(reads))}; ` +
      `the admin's answer after ${adminSeconds} s (this process makes all 201 TLS connections); ` +
      `the longest review in the webhook, its wait in line included: ${inWebhook} s`,
  );
  expect(admin.body.response).toEqual({ uid: "admin", allowed: true });
  expect(answers.every((a) => a.status === 200 && a.body.response?.uid.startsWith("forged-"))).toBe(true);
  expect(answered).toHaveLength(201);
  expect(inWebhook).toBeLessThan(2);
  expect(reads.length / 200).toBeLessThan(0.1);
});

function countBy(list: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of list) counts[r.split("?")[0]!] = (counts[r.split("?")[0]!] ?? 0) + 1;
  return counts;
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!condition()) throw new Error("not reached");
}
