import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { lvmNodeStatusSchema } from "../api";
import { AgentService } from "./agent-service";
import { createAuthorizer } from "./auth/authorizer";
import { createStaticTokenClient, parseTokenFile } from "./auth/token-file";
import { Journal } from "./journal";
import { AgentMetrics } from "./metrics";
import { buildOpenApiDocument, openApiRoute } from "./openapi";
import { healthRoutes } from "./routes/health";
import { metricsRoute } from "./routes/metrics";
import { v1Routes } from "./routes/v1";
import { createAgentServer } from "./server";
import { FakeNode, fakePlanner, specFor } from "../../test/support/agent/fake-node";
import { request as httpRequest, type Res } from "../../test/support/agent/http";

/**
 * The HTTP edge in-process: the real server, routes, service, authorizer (static tokens) and
 * journal, over a FakeNode (no lvm). Every refusal is checked to run no command at all.
 */
const GOOD = "g".repeat(32); // may update lvmnodes/node-a
const OTHER = "o".repeat(32); // a valid token for node-b only

let dir: string;
let node: FakeNode;
let server: http.Server;
let base: string;
let service: AgentService;
let gate: Promise<void> | undefined;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-server-"));
  node = new FakeNode(["/dev/loop3", "/dev/loop4"]);
  const metrics = new AgentMetrics();
  service = new AgentService({
    node: "node-a",
    run: node.run,
    discover: async () => {
      await gate;
      return node.discover();
    },
    planner: fakePlanner,
    journal: new Journal({ stateDir: path.join(dir, "state") }),
    metrics,
    lvmdConfigPath: path.join(dir, "lvmd.yaml"),
    identity: node.identity,
  });
  const authorize = createAuthorizer({
    client: createStaticTokenClient(parseTokenFile(`${GOOD},operator,node-a\n${OTHER},intruder,node-b\n`)),
    node: "node-a",
  });
  server = createAgentServer({
    routes: [
      ...healthRoutes({ notReady: () => undefined }),
      metricsRoute(service),
      openApiRoute(buildOpenApiDocument()),
      ...v1Routes(service),
    ],
    authorize,
    metrics,
    bodyLimitBytes: 64 * 1024,
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  gate = undefined;
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The agent's API under test; `body` is sent as it is. */
function request(
  method: string,
  urlPath: string,
  opts: {
    token?: string;
    body?: string | Buffer;
    contentType?: string;
    headers?: Record<string, string>;
  } = {},
) {
  const { body, ...rest } = opts;
  return httpRequest(base, method, urlPath, { ...rest, ...(body !== undefined ? { raw: body } : {}) });
}

const spec = specFor({ vg0: ["/dev/loop3", "/dev/loop4"] });
const post = (p: string, body: unknown, token = GOOD) =>
  request("POST", p, { token, body: JSON.stringify(body) });

describe("authentication and authorization", () => {
  it.each([
    ["GET", "/v1/inventory"],
    ["GET", "/v1/status"],
    ["POST", "/v1/plan"],
    ["POST", "/v1/apply"],
    ["POST", "/v1/teardown"],
  ])(
    "%s %s: 401 with WWW-Authenticate without a token, 401 with a bad one, 403 for another node's token",
    async (method, p) => {
      const body = method === "POST" ? JSON.stringify({ spec, planHash: "x" }) : undefined;
      const none = await request(method, p, { ...(body ? { body } : {}) });
      expect(none.status).toBe(401);
      expect(none.headers["www-authenticate"]).toBe('Bearer realm="pulumi-lvm-agent"');
      expect(none.json.error.code).toBe("Unauthorized");
      expect((await request(method, p, { token: "x".repeat(32), ...(body ? { body } : {}) })).status).toBe(
        401,
      );
      const other = await request(method, p, { token: OTHER, ...(body ? { body } : {}) });
      expect(other.status).toBe(403);
      expect(other.json.error.message).toMatch(
        /user "intruder" may not update lvmnodes.lvm.topolvm.io\/node-a/,
      );
      expect(node.commands).toEqual([]);
    },
  );

  it("takes the token from X-Pulumi-Lvm-Authorization when Authorization is absent (the API server's pod proxy)", async () => {
    const proxied = (token: string, headers: Record<string, string> = {}) =>
      request("GET", "/v1/status", {
        headers: { "x-pulumi-lvm-authorization": `Bearer ${token}`, ...headers },
      });
    expect((await proxied(GOOD)).status).toBe(200);
    const other = await proxied(OTHER);
    expect(other.status).toBe(403);
    expect(other.json.error.message).toMatch(
      /user "intruder" may not update lvmnodes.lvm.topolvm.io\/node-a/,
    );
    expect((await proxied("x".repeat(32))).status).toBe(401);
    // With both, Authorization alone counts: a good proxy header does not rescue a bad Authorization.
    expect((await proxied(GOOD, { authorization: `Bearer ${OTHER}` })).status).toBe(403);
    expect(node.commands).toEqual([]);
  });

  it("serves health, readiness, metrics and the OpenAPI document without a token", async () => {
    expect((await request("GET", "/healthz")).status).toBe(200);
    expect((await request("GET", "/readyz")).text).toBe("ok\n");
    expect((await request("GET", "/openapi.json")).json.openapi).toBe("3.1.0");
    expect((await request("GET", "/metrics")).headers["content-type"]).toMatch(/^text\/plain; version=0.0.4/);
  });
});

describe("bad input: a clear 4xx, and no command runs", () => {
  const cases: Array<[string, () => Promise<Res>, number, string | RegExp]> = [
    [
      "malformed JSON",
      () => request("POST", "/v1/plan", { token: GOOD, body: '{"spec": {' }),
      400,
      "InvalidJson",
    ],
    ["an empty body", () => request("POST", "/v1/plan", { token: GOOD, body: "" }), 400, "InvalidJson"],
    [
      "a duplicate key (JSON.parse would keep the last one silently)",
      () =>
        request("POST", "/v1/plan", {
          token: GOOD,
          body: JSON.stringify({ spec }).replace('"volumeGroups":', '"volumeGroups":[],"volumeGroups":'),
        }),
      400,
      /the body names the key spec.volumeGroups twice/,
    ],
    [
      "a body that is not JSON by type",
      () =>
        request("POST", "/v1/plan", {
          token: GOOD,
          body: "spec=1",
          contentType: "application/x-www-form-urlencoded",
        }),
      415,
      "UnsupportedMediaType",
    ],
    [
      "an unknown top-level field",
      () => post("/v1/apply", { spec, planHash: "abc", dryRun: true }),
      400,
      /dryRun: unknown field/,
    ],
    [
      "an unknown nested field",
      () => post("/v1/plan", { spec: { ...spec, volumeGroups: [{ ...spec.volumeGroups[0], sizeGi: 5 }] } }),
      400,
      /spec.volumeGroups\[0\].sizeGi: unknown field/,
    ],
    ["a missing plan hash", () => post("/v1/apply", { spec }), 400, /planHash: is required/],
    [
      "a device name with ..",
      () => post("/v1/plan", { spec: specFor({ vg0: ["/dev/../etc/shadow"] }) }),
      400,
      /values\[0\]: device "\/dev\/..\/etc\/shadow" contains a \. or \.\. segment/,
    ],
    [
      "a device outside /dev",
      () => post("/v1/plan", { spec: specFor({ vg0: ["/etc/passwd"] }) }),
      400,
      /device "\/etc\/passwd" is not under \/dev\//,
    ],
    [
      "shell metacharacters in a device",
      () => post("/v1/plan", { spec: specFor({ vg0: ["/dev/sdb;reboot"] }) }),
      400,
      /characters other than/,
    ],
    [
      "backticks in a kernel name",
      () => post("/v1/plan", { spec: specFor({ vg0: ["sd`id`"] }) }),
      400,
      /must be a kernel name/,
    ],
    [
      "a relative path",
      () => post("/v1/plan", { spec: specFor({ vg0: ["../../sdb"] }) }),
      400,
      /must be a kernel name|segment/,
    ],
    [
      "an invalid volume group name",
      () => post("/v1/teardown", { spec, volumeGroup: "VG_0" }),
      400,
      /volumeGroup: must be a DNS-1123 label/,
    ],
    [
      "a teardown of a group not in the spec",
      () => post("/v1/teardown", { spec, volumeGroup: "other" }),
      400,
      "UnknownVolumeGroup",
    ],
    ["an unknown route", () => request("GET", "/v1/nope", { token: GOOD }), 404, "NotFound"],
    ["a wrong method", () => request("DELETE", "/v1/apply", { token: GOOD }), 405, "MethodNotAllowed"],
  ];
  it.each(cases)("%s", async (_what, send, status, code) => {
    const res = await send();
    expect(res.status).toBe(status);
    if (typeof code === "string") expect(res.json.error.code).toBe(code);
    else expect(`${res.json.error.message}\n${JSON.stringify(res.json.error.problems ?? [])}`).toMatch(code);
    expect(node.commands).toEqual([]);
  });

  it("gives every problem with its field path at once", async () => {
    const res = await post("/v1/apply", { spec: { volumeGroups: [] }, planHash: "", extra: 1 });
    expect(res.json.error.problems.map((p: { path: string }) => p.path).sort()).toEqual([
      "extra",
      "planHash",
      "spec.volumeGroups",
    ]);
  });

  it("refuses a body over the limit by its Content-Length, without reading it", async () => {
    const res = await request("POST", "/v1/plan", { token: GOOD, body: Buffer.alloc(65 * 1024, 0x20) });
    expect(res.status).toBe(413);
    expect(res.json.error.code).toBe("BodyTooLarge");
    expect(res.headers.connection).toBe("close");
    expect(node.commands).toEqual([]);
  });

  it("refuses a chunked body when it grows past the limit", async () => {
    const res = await new Promise<Res>((resolve, reject) => {
      const req = http.request(`${base}/v1/plan`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${GOOD}`,
          "content-type": "application/json",
          "transfer-encoding": "chunked",
        },
      });
      req.on("response", (r) => {
        let text = "";
        r.on("data", (c) => (text += c));
        r.on("end", () =>
          resolve({ status: r.statusCode!, headers: r.headers, text, json: JSON.parse(text) }),
        );
      });
      req.on("error", reject);
      const chunk = Buffer.alloc(16 * 1024, 0x20);
      let sent = 0;
      const pump = () => {
        if (sent++ < 8 && !req.destroyed) req.write(chunk, () => setTimeout(pump, 5));
      };
      pump();
    });
    expect(res.status).toBe(413);
    expect(node.commands).toEqual([]);
  });

  it("answers a stale plan hash with 409 and the fresh plan; nothing is written", async () => {
    const plan = (await post("/v1/plan", { spec })).json;
    node.pvs.set("/dev/loop4", { vg: "", uuid: "changed" });
    const commandsBefore = node.commands.length;
    const res = await post("/v1/apply", { spec, planHash: plan.hash });
    expect(res.status).toBe(409);
    expect(res.json.error.code).toBe("PlanChanged");
    expect(res.json.error.plan.hash).not.toBe(plan.hash);
    expect(node.commands.length).toBe(commandsBefore);
  });

  it("answers a second concurrent apply with 409 apply in progress", async () => {
    const plan = (await post("/v1/plan", { spec })).json;
    let open!: () => void;
    gate = new Promise((r) => (open = r));
    const first = post("/v1/apply", { spec, planHash: plan.hash });
    // Until the first apply holds the node (it waits at the gate in its discovery), not a fixed
    // 50 ms: on a loaded machine the request may not have arrived by then.
    while (!service.busy) await new Promise((r) => setTimeout(r, 5));
    const second = await post("/v1/apply", { spec, planHash: plan.hash });
    expect(second.status).toBe(409);
    expect(second.json.error.code).toBe("OperationInProgress");
    expect(second.json.error.message).toMatch(/apply in progress on node node-a/);
    open();
    expect((await first).status).toBe(200);
    expect(node.commands.filter((c) => c[0] === "vgcreate")).toHaveLength(1);
  });
});

describe("the API", () => {
  it("plans (dry run: nothing written), applies with the hash, reports status", async () => {
    const plan = await post("/v1/plan", { spec });
    expect(plan.status).toBe(200);
    expect(plan.json.actions.map((a: { op: string }) => a.op)).toEqual([
      "pvcreate",
      "pvcreate",
      "vgcreate",
      "write-lvmd-config",
    ]);
    expect(node.commands).toEqual([]);
    expect(fs.existsSync(path.join(dir, "lvmd.yaml"))).toBe(false);

    const applied = await post("/v1/apply", { spec, planHash: plan.json.hash });
    expect(applied.status).toBe(200);
    expect(applied.json.steps.map((s: { outcome: string }) => s.outcome)).toEqual([
      "done",
      "done",
      "done",
      "done",
    ]);
    expect(node.vgs.has("vg0")).toBe(true);

    const status = await request("GET", "/v1/status", { token: GOOD });
    expect(status.json.error).toBeUndefined();
    expect(status.status).toBe(200);
    expect(lvmNodeStatusSchema.parse(status.json.status)).toBeDefined();
    expect(status.json.status.volumeGroups[0]).toMatchObject({
      name: "vg0",
      state: "Healthy",
      size: "2Gi",
      free: "2Gi",
    });
    expect(
      status.json.status.volumeGroups[0].devices.included.map((d: { kname: string }) => d.kname),
    ).toEqual(["/dev/loop3", "/dev/loop4"]);
    expect(status.json.lastOperation).toMatchObject({ kind: "apply", result: "succeeded", stepsDone: 4 });
  });

  it("reports a failed apply in the status with the command, exit code and stderr", async () => {
    const plan = (await post("/v1/plan", { spec })).json;
    node.failOn = "vgcreate --addtag pulumi-lvm vg0 /dev/loop3 /dev/loop4";
    const res = await post("/v1/apply", { spec, planHash: plan.hash });
    expect(res.status).toBe(500);
    expect(res.json.error).toMatchObject({
      code: "CommandFailed",
      command: { exitCode: 5, stderr: "  fake failure\n" },
    });
    const status = (await request("GET", "/v1/status", { token: GOOD })).json;
    expect(status.status.volumeGroups[0]).toMatchObject({ name: "vg0", state: "Failed" });
    expect(status.status.volumeGroups[0].message).toMatch(
      /vgcreate --addtag pulumi-lvm vg0 \/dev\/loop3 \/dev\/loop4 exited 5: fake failure/,
    );
    expect(status.json?.lastOperation ?? status.lastOperation).toMatchObject({
      result: "failed",
      error: { step: 2, action: "vgcreate", exitCode: 5 },
    });
  });

  it("refuses a teardown while user volumes exist (409 with the list), and tears down with force", async () => {
    await post("/v1/apply", { spec, planHash: (await post("/v1/plan", { spec })).json.hash });
    node.lvs.set("vg0/pvc-1", { attr: "-wi-a-----" });
    const before = node.commands.length;
    const refused = await post("/v1/teardown", { spec, volumeGroup: "vg0" });
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe("VolumeGroupInUse");
    expect(refused.json.error.volumes).toEqual([
      { volumeGroup: "vg0", name: "pvc-1", attributes: "-wi-a-----", size: 1 << 20 },
    ]);
    expect(node.commands.length).toBe(before);
    node.lvs.delete("vg0/pvc-1");
    const dry = await post("/v1/teardown", { spec, volumeGroup: "vg0", dryRun: true });
    expect(dry.json.plan.actions.map((a: { op: string }) => a.op)).toEqual([
      "vgremove",
      "pvremove",
      "pvremove",
    ]);
    expect(node.commands.length).toBe(before);
    const done = await post("/v1/teardown", { spec, volumeGroup: "vg0" });
    expect(done.status).toBe(200);
    expect(node.vgs.size).toBe(0);
    expect(node.pvs.size).toBe(0);
  });

  it("counts requests, operations and errors in /metrics", async () => {
    await request("GET", "/v1/status");
    await post("/v1/apply", { spec, planHash: (await post("/v1/plan", { spec })).json.hash });
    const text = (await request("GET", "/metrics")).text;
    expect(text).toContain(
      'pulumi_lvm_agent_http_requests_total{route="/v1/status",method="GET",code="401"} 1',
    );
    expect(text).toContain('pulumi_lvm_agent_operations_total{operation="apply",result="succeeded"} 1');
    expect(text).toContain('pulumi_lvm_agent_operation_duration_seconds_count{operation="apply"} 1');
    expect(text).toContain('pulumi_lvm_agent_errors_total{kind="auth"} 1');
    expect(text).toContain('pulumi_lvm_agent_volume_group_size_bytes{vg="vg0"} 2147483648');
  });
});
