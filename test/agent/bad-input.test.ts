/**
 * Bad input against a real agent process: each request gets a clear 4xx, and the agent's own
 * command log (--command-log, written by the runner for every command it executes) shows that no
 * lvm command ran, or, where the agent must look at the node to answer (a stale plan hash), that
 * nothing was written.
 */
import * as http from "node:http";
import { randomBytes } from "node:crypto";
import {
  commandLog,
  isWrite,
  pvs,
  request,
  requireHostTier,
  Scratch,
  startAgent,
  thickSpec,
  writeTokenFile,
  type AgentProcess,
  type Res,
} from "./harness";

jest.setTimeout(120_000);

let scratch: Scratch;
let agent: AgentProcess | undefined;
let tokens: Record<string, string>;
let L1: string, L2: string;
const VG = `agt-bad-${randomBytes(3).toString("hex")}`;
const log = () => commandLog(scratch.path("commands.jsonl"));

beforeAll(async () => {
  requireHostTier();
  scratch = new Scratch("bad-input");
  [L1, L2] = [scratch.loop(), scratch.loop()];
  tokens = writeTokenFile(scratch.path("tokens"), {
    op: { user: "operator", node: "node-bad" },
    other: { user: "intruder", node: "node-elsewhere" },
  });
  agent = await startAgent({
    node: "node-bad",
    devices: [L1, L2],
    ...scratch.agentFiles(),
    auth: { tokenFile: scratch.path("tokens") },
    extraArgs: ["--body-limit", "1Mi"],
  });
});

afterAll(async () => {
  await agent?.stop();
  scratch?.cleanup();
});

const spec = () => thickSpec(VG, [L1, L2]);
const post = (p: string, body: unknown, token = tokens.op) => request(agent!.url, "POST", p, { token, body });

/** Sends a request and checks its status and error code, and that no command at all ran meanwhile. */
async function refusedWithoutCommands(send: () => Promise<Res>, status: number, code: string): Promise<Res> {
  const before = log().length;
  const res = await send();
  expect({ status: res.status, code: res.json?.error?.code }).toEqual({ status, code });
  expect(log().slice(before)).toEqual([]);
  return res;
}

describe("bad input to a real agent", () => {
  it("no token → 401 with WWW-Authenticate; a token for another node → 403", async () => {
    const none = await refusedWithoutCommands(
      () => request(agent!.url, "POST", "/v1/apply", { body: { spec: spec(), planHash: "h" } }),
      401,
      "Unauthorized",
    );
    expect(none.headers["www-authenticate"]).toMatch(/^Bearer /);
    await refusedWithoutCommands(
      () => post("/v1/apply", { spec: spec(), planHash: "h" }, "not-a-token-at-all-0123456789"),
      401,
      "Unauthorized",
    );
    await refusedWithoutCommands(
      () => post("/v1/apply", { spec: spec(), planHash: "h" }, tokens.other),
      403,
      "Forbidden",
    );
    await refusedWithoutCommands(
      () => request(agent!.url, "GET", "/v1/inventory", { token: tokens.other }),
      403,
      "Forbidden",
    );
  });

  it("malformed JSON → 400", async () => {
    const res = await refusedWithoutCommands(
      () =>
        request(agent!.url, "POST", "/v1/apply", { token: tokens.op, raw: '{"spec": {"volumeGroups": [' }),
      400,
      "InvalidJson",
    );
    expect(res.json.error.message).toMatch(/not valid JSON/);
  });

  it("unknown fields → 400 with their paths", async () => {
    const res = await refusedWithoutCommands(
      () =>
        post("/v1/apply", {
          spec: { ...spec(), volumeGroups: [{ ...spec().volumeGroups[0], wipeEverything: true }] },
          planHash: "h",
          force: true,
        }),
      400,
      "InvalidBody",
    );
    expect(res.json.error.problems).toEqual(
      expect.arrayContaining([
        { path: "force", message: "unknown field" },
        { path: "spec.volumeGroups[0].wipeEverything", message: "unknown field" },
      ]),
    );
  });

  it("an oversized body → 413 without reading it", async () => {
    const big = JSON.stringify({ spec: spec(), planHash: "h", pad: "x".repeat(2 * 1024 * 1024) });
    const res = await refusedWithoutCommands(
      () => request(agent!.url, "POST", "/v1/apply", { token: tokens.op, raw: big }),
      413,
      "BodyTooLarge",
    );
    expect(res.headers.connection).toBe("close");
  });

  it("an oversized body without a Content-Length → 413 when it passes the limit", async () => {
    const before = log().length;
    const res = await new Promise<{ status: number; code: string }>((resolve, reject) => {
      const req = http.request(`${agent!.url}/v1/plan`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${tokens.op}`,
          "content-type": "application/json",
          "transfer-encoding": "chunked",
        },
      });
      req.on("response", (r) => {
        let text = "";
        r.on("data", (c) => (text += c));
        r.on("end", () => resolve({ status: r.statusCode!, code: JSON.parse(text).error.code }));
      });
      req.on("error", reject);
      const chunk = Buffer.alloc(256 * 1024, 0x20);
      let sent = 0;
      const pump = () => {
        if (sent++ < 8 && !req.destroyed) req.write(chunk, () => setTimeout(pump, 10));
      };
      pump();
    });
    expect(res).toEqual({ status: 413, code: "BodyTooLarge" });
    expect(log().slice(before)).toEqual([]);
  });

  it.each([
    ["with ..", "/dev/../dev/sda"],
    ["outside /dev", "/etc/shadow"],
    ["with a shell metacharacter", "/dev/loop0;mkfs.ext4 /dev/sda"],
    ["with command substitution", "$(reboot)"],
    ["with a space", "/dev/loop0 /dev/sda"],
  ])("a device name %s → 400", async (_what, device) => {
    const res = await refusedWithoutCommands(
      () => post("/v1/plan", { spec: thickSpec(VG, [L1, device]) }),
      400,
      "InvalidBody",
    );
    expect(res.json.error.problems[0].path).toBe(
      "spec.volumeGroups[0].deviceSelector.deviceSelectorTerms[0].matchExpressions[0].values[1]",
    );
  });

  it("a stale plan hash → 409 with the fresh plan; the agent looked, and wrote nothing", async () => {
    const before = log().length;
    const res = await post("/v1/apply", { spec: spec(), planHash: "0".repeat(64) });
    expect(res.status).toBe(409);
    expect(res.json.error.code).toBe("PlanChanged");
    expect(res.json.error.plan.actions.length).toBeGreaterThan(0);
    expect(log().slice(before).filter(isWrite)).toEqual([]);
    expect(pvs([L1, L2])).toEqual([]);
  });

  it("two concurrent applies: one runs, the other gets 409 apply in progress and runs nothing", async () => {
    const plan = (await post("/v1/plan", { spec: spec() })).json;
    const [r1, r2] = await Promise.all([
      post("/v1/apply", { spec: spec(), planHash: plan.hash }),
      new Promise<void>((r) => setTimeout(r, 30)).then(() =>
        post("/v1/apply", { spec: spec(), planHash: plan.hash }),
      ),
    ]);
    const statuses = [r1.status, r2.status].sort();
    expect(statuses).toEqual([200, 409]);
    const loser = r1.status === 409 ? r1 : r2;
    expect(loser.json.error.code).toBe("OperationInProgress");
    expect(loser.json.error.message).toMatch(/apply in progress/);
    const writes = log().filter(isWrite);
    expect(writes.filter((c) => c.tool === "vgcreate")).toHaveLength(1);
    expect(
      writes
        .filter((c) => c.tool === "pvcreate")
        .map((c) => c.requested.at(-1))
        .sort(),
    ).toEqual([L1, L2].sort());
  });
});
