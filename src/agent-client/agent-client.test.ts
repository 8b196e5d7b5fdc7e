import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { httpTransport, type Transport } from "../kube/http";
import { agentClient, type AgentClient, type AgentEndpoint } from "./agent-client";

const status = { node: "node-a", status: { conditions: [] } };

describe("agentClient through the API server's pod proxy", () => {
  const proxied: AgentEndpoint = {
    node: "node-a",
    url: "https://api:6443/api/v1/namespaces/lvm/pods/http:p1:8080/proxy/",
    token: "agent-token",
    proxy: {
      namespace: "lvm",
      pod: "p1",
      apiServer: { server: "https://api:6443", ca: () => "CA", token: () => "user-token" },
    },
  };

  test("the caller's credentials in Authorization, the agent token in X-Pulumi-Lvm-Authorization", async () => {
    const seen: Parameters<Transport>[0][] = [];
    const client = agentClient(async (request) => {
      seen.push(request);
      return { status: 200, body: JSON.stringify(status) };
    });
    await client.status(proxied);
    expect(seen[0]!.url.href).toBe(
      "https://api:6443/api/v1/namespaces/lvm/pods/http:p1:8080/proxy/v1/status",
    );
    expect(seen[0]!.headers).toEqual({
      authorization: "Bearer user-token",
      "x-pulumi-lvm-authorization": "Bearer agent-token",
      "x-pulumi-lvm-target": "node-a",
      accept: "application/json",
    });
    expect(seen[0]!.tls).toEqual({ ca: "CA" });
  });

  test("directly (sandbox): the agent token in Authorization, the agent's CA", async () => {
    const seen: Parameters<Transport>[0][] = [];
    const client = agentClient(async (request) => {
      seen.push(request);
      return { status: 200, body: JSON.stringify(status) };
    });
    await client.status({ node: "node-a", url: "https://10.0.0.5:8443", token: "t", ca: "AGENT CA" });
    expect(seen[0]!.headers.authorization).toBe("Bearer t");
    expect(seen[0]!.headers).not.toHaveProperty("x-pulumi-lvm-authorization");
    expect(seen[0]!.tls).toEqual({ ca: "AGENT CA" });
  });

  test("the API server's own refusal names the node, the pod, the status and the API's message", async () => {
    const client = agentClient(async () => ({
      status: 403,
      body: JSON.stringify({
        kind: "Status",
        message: 'pods "http:p1:8080" is forbidden: User "u" cannot create resource "pods/proxy"',
      }),
    }));
    await expect(client.plan(proxied, {} as never)).rejects.toThrow(
      'node node-a: POST /v1/plan (pod lvm/p1, through the API server) failed with HTTP 403: pods "http:p1:8080" is forbidden: User "u" cannot create resource "pods/proxy"',
    );
  });

  test("an unreachable API server is named, never the token; the read was tried three times", async () => {
    const waited: number[] = [];
    let calls = 0;
    const client = agentClient(
      async () => {
        calls++;
        throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
      },
      { sleep: async (ms) => void waited.push(ms) },
    );
    const error = (await client.status(proxied).catch((e: Error) => e)) as Error;
    expect(error.message).toBe(
      "node node-a: cannot reach the API server at https://api:6443 to call its agent (pod lvm/p1): connect ECONNREFUSED (tried 3 times, after waiting 1 s and 3 s)",
    );
    expect(error.message).not.toMatch(/token/);
    expect([calls, waited]).toEqual([3, [1000, 3000]]);
  });
});

describe("agentClient: read-only calls tried again after a transient failure", () => {
  const direct: AgentEndpoint = { node: "node-a", url: "http://10.0.0.5:8080", token: "t" };
  const proxyError = (code: number) => ({
    status: code,
    body: JSON.stringify({
      kind: "Status",
      message: "error trying to reach service: net/http: TLS handshake timeout",
      code,
    }),
  });
  const agentError = {
    status: 503,
    body: JSON.stringify({ error: { code: "AgentStopping", message: "the agent is stopping" } }),
  };
  /** A transport answering each call with the next of `answers`; counts the calls. */
  function scripted(answers: Array<{ status: number; body: string } | Error>) {
    const seen = { calls: 0, waited: [] as number[] };
    const client = agentClient(
      async () => {
        const a = answers[Math.min(seen.calls++, answers.length - 1)]!;
        if (a instanceof Error) throw a;
        return a;
      },
      { sleep: async (ms) => void seen.waited.push(ms) },
    );
    return { client, seen };
  }
  const ok = { status: 200, body: JSON.stringify(status) };

  test.each([502, 503, 504])(
    "status: the API server's proxy answering %d, then the agent: its answer",
    async (code) => {
      const { client, seen } = scripted([proxyError(code), ok]);
      await expect(client.status(direct)).resolves.toMatchObject({ node: "node-a" });
      expect(seen).toEqual({ calls: 2, waited: [1000] });
    },
  );

  test("plan: not reached twice, then reached", async () => {
    const reset = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    const plan = scripted([reset, refused, ok]);
    await plan.client.plan(direct, {} as never).catch(() => undefined); // the body is not a plan: only the calls matter
    expect(plan.seen).toEqual({ calls: 3, waited: [1000, 3000] });
  });

  test.each([
    ["an agent's own 503 (its error body)", agentError],
    ["a 500 of the API server", proxyError(500)],
    ["403 for pods/proxy", proxyError(403)],
    [
      "a TLS verification failure",
      Object.assign(new Error("self-signed certificate"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" }),
    ],
    ["a call that timed out", new Error("no answer within 60 s")],
  ])("not repeated: %s", async (_name, answer) => {
    const { client, seen } = scripted([answer, ok]);
    await expect(client.status(direct)).rejects.toMatchObject({
      status: "status" in answer ? answer.status : 0,
    });
    expect(seen.calls).toBe(1);
  });

  test("apply and teardown are never repeated", async () => {
    const a = scripted([proxyError(503), ok]);
    await expect(a.client.apply(direct, {} as never, "h")).rejects.toMatchObject({ status: 503 });
    const t = scripted([Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }), ok]);
    await expect(t.client.teardown(direct, {} as never)).rejects.toMatchObject({ code: "Unreachable" });
    expect([a.seen.calls, t.seen.calls]).toEqual([1, 1]);
  });

  test("an aborted read is not tried again", async () => {
    const stop = new AbortController();
    const { client, seen } = scripted([new Error("ECONNREFUSED"), ok]);
    stop.abort();
    await expect(client.status(direct, { signal: stop.signal })).rejects.toMatchObject({ code: "Aborted" });
    expect(seen.calls).toBe(1);
  });
});

describe("agentClient: cancelling read-only calls", () => {
  const direct: AgentEndpoint = { node: "node-a", url: "http://10.0.0.5:8080", token: "t" };
  /** A transport that answers only when aborted: by rejecting, as httpTransport does. */
  const hanging: Transport = (request) =>
    new Promise((_resolve, reject) =>
      request.signal?.addEventListener("abort", () => reject(new Error("The operation was aborted"))),
    );

  test.each([
    ["plan", "POST /v1/plan", (c: AgentClient, s: AbortSignal) => c.plan(direct, {} as never, { signal: s })],
    ["status", "GET /v1/status", (c: AgentClient, s: AbortSignal) => c.status(direct, { signal: s })],
  ])("%s: an abort ends it with code Aborted, naming node and call", async (_name, what, callWith) => {
    const stop = new AbortController();
    const pending = callWith(agentClient(hanging), stop.signal).catch((e: unknown) => e);
    stop.abort();
    expect(await pending).toMatchObject({
      name: "AgentCallError",
      node: "node-a",
      status: 0,
      code: "Aborted",
      message: `node node-a: ${what} to its agent was aborted`,
    });
  });

  test("apply and teardown are sent without a signal", async () => {
    const seen: Parameters<Transport>[0][] = [];
    const client = agentClient(async (request) => {
      seen.push(request);
      return { status: 200, body: JSON.stringify({ node: "node-a", steps: [] }) };
    });
    await client.apply(direct, {} as never, "hash").catch(() => undefined);
    await client.teardown(direct, {} as never).catch(() => undefined);
    expect(seen).toHaveLength(2);
    for (const request of seen) expect(request).not.toHaveProperty("signal");
  });

  test("httpTransport: an abort ends a request the server never answers", async () => {
    const server = http.createServer(() => undefined);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const stop = new AbortController();
      const pending = httpTransport({
        method: "GET",
        url: new URL(`http://127.0.0.1:${port}/v1/status`),
        headers: {},
        timeoutMs: 60_000,
        signal: stop.signal,
      }).catch((e: unknown) => e);
      setTimeout(() => stop.abort(), 20);
      expect(await pending).toMatchObject({ name: "AbortError" });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("agentClient: an answer must be about the node asked for (issue 12)", () => {
  const ep: AgentEndpoint = { node: "n3", namespace: "storage", url: "http://10.0.0.7:8080", token: "t" };
  const answering =
    (status: number, body: string): Transport =>
    async () => ({ status, body });

  test("the call names its target: X-Pulumi-Lvm-Target <namespace>/<node>", async () => {
    const seen: Parameters<Transport>[0][] = [];
    await agentClient(async (request) => {
      seen.push(request);
      return { status: 200, body: JSON.stringify({ node: "n3", status: { conditions: [] } }) };
    }).status(ep);
    expect(seen[0]!.headers["x-pulumi-lvm-target"]).toBe("storage/n3");
  });

  test.each([
    ["plan", (c: AgentClient) => c.plan(ep, {} as never), "POST /v1/plan"],
    ["status", (c: AgentClient) => c.status(ep), "GET /v1/status"],
  ])("%s answered for n1: WrongNode, naming both nodes", async (_name, call, what) => {
    const body = JSON.stringify({
      node: "n1",
      status: { state: "Ready", conditions: [] },
      selected: true,
      volumeGroups: [],
      actions: [],
      blocked: [],
      lvmd: { "device-classes": [] },
      hash: "h",
    });
    await expect(call(agentClient(answering(200, body)))).rejects.toMatchObject({
      code: "WrongNode",
      message: `node n3: ${what} was answered by the agent of node n1, not of LVMNode storage/n3 (http://10.0.0.7:8080); its answer is not used`,
    });
  });

  test("a body that is not JSON: said so, with its start", async () => {
    await expect(
      agentClient(answering(200, "<html><body>Welcome to nginx!</body></html>")).status(ep),
    ).rejects.toMatchObject({
      code: "BadResponse",
      message:
        'node n3: GET /v1/status answered HTTP 200 with a body that is not JSON (starts "<html><body>Welcome to nginx!</body></html>"); is http://10.0.0.7:8080 the agent?',
    });
  });

  test("JSON of the wrong shape: the field path and what is wrong", async () => {
    await expect(
      agentClient(answering(200, JSON.stringify({ node: "n3" }))).status(ep),
    ).rejects.toMatchObject({
      code: "BadResponse",
      message: expect.stringMatching(/^node n3: GET \/v1\/status answered with an unexpected body: status: /),
    });
  });
});
