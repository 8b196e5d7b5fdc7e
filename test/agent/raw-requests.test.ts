/**
 * Requests Node's HTTP parser or the URL parser reject, sent as raw bytes (what `printf ... | nc`
 * sends) to a real agent process, unauthenticated (issue 11, item 1): each gets a 4xx with the
 * documented JSON error shape, and the process keeps serving — also while an apply runs.
 */
import * as net from "node:net";
import { randomBytes } from "node:crypto";
import { agentTestbed } from "../support/agent/testbed";
import { membersOf, request, thickSpec, type AgentProcess } from "./harness";

jest.setTimeout(120_000);

const bed = agentTestbed("raw-requests");
let agent: AgentProcess | undefined;
let token: string;
let L1: string;

beforeAll(async () => {
  L1 = bed.scratch.loop();
  ({ agent, token } = await bed.start({ node: "node-raw", devices: [L1] }));
});

/** Writes `bytes` to the agent's port and returns everything it answers until it closes (or 5 s). */
function raw(bytes: string): Promise<string> {
  const { hostname, port } = new URL(agent!.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.end(bytes));
    let out = "";
    socket.on("data", (d) => (out += d.toString("latin1")));
    socket.on("error", (e) => (out ? resolve(out) : reject(e)));
    socket.on("close", () => resolve(out));
    socket.setTimeout(5_000, () => socket.destroy());
  });
}

function parse(answer: string): { status: number; contentType: string; json: unknown } {
  const [head, ...rest] = answer.split("\r\n\r\n");
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head ?? "")?.[1]);
  const contentType = /\r\ncontent-type: ([^\r]*)/i.exec(head ?? "")?.[1] ?? "";
  let json: unknown;
  try {
    json = JSON.parse(rest.join("\r\n\r\n"));
  } catch {
    json = undefined;
  }
  return { status, contentType, json };
}

async function stillServing(): Promise<void> {
  expect(agent!.child.exitCode).toBeNull();
  const res = await request(agent!.url, "GET", "/healthz");
  expect(res.status).toBe(200);
}

describe("requests the parsers reject", () => {
  it.each([
    ["a path the URL parser rejects", "GET //[ HTTP/1.1\r\nHost: x\r\n\r\n", 400],
    [
      "another one, on an authenticated route",
      "POST //[/v1/apply HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
      400,
    ],
    ["a malformed request line", "GET\r\n\r\n", 400],
    ["a header without a colon", "GET /healthz HTTP/1.1\r\nHost x\r\n\r\n", 400],
    [
      "headers over Node's limit",
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
      431,
    ],
  ])("%s: answers the JSON error shape and the agent keeps serving", async (_what, bytes, status) => {
    const answer = parse(await raw(bytes));
    expect(answer.status).toBe(status);
    expect(answer.contentType).toMatch(/^application\/json/);
    expect(answer.json).toEqual({ error: { code: expect.any(String), message: expect.any(String) } });
    await stillServing();
  });

  it("does not interrupt an apply that runs meanwhile", async () => {
    const vg = `agt-raw-${randomBytes(3).toString("hex")}`;
    const spec = thickSpec(vg, [L1]);
    const plan = await request(agent!.url, "POST", "/v1/plan", { token, body: { spec } });
    const applying = request(agent!.url, "POST", "/v1/apply", {
      token,
      body: { spec, planHash: plan.json.hash },
    });
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => raw("GET //[ HTTP/1.1\r\nHost: x\r\n\r\n")),
    );
    for (const a of answers) expect(parse(a).status).toBe(400);
    const applied = await applying;
    if (applied.status !== 200) throw new Error(`apply: HTTP ${applied.status}: ${applied.text}`);
    expect(membersOf([L1], vg)).toEqual([L1]);
    await stillServing();
  });
});
