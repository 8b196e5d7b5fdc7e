import type { Transport } from "../../../src/agent-client/agent-client";
import { apiUrl, kubeApi, KubeApiError } from "./kube-api";

const conn = { server: "https://api.example:6443", ca: "CA", token: () => "user-token" };

test("apiUrl keeps the server's path prefix and the query", () => {
  expect(
    apiUrl({ server: "https://rancher/k8s/clusters/c-1/" }, "/api/v1/pods?labelSelector=a%3Db").href,
  ).toBe("https://rancher/k8s/clusters/c-1/api/v1/pods?labelSelector=a%3Db");
  expect(apiUrl(conn, "/api/v1/nodes").href).toBe("https://api.example:6443/api/v1/nodes");
});

describe("kubeApi", () => {
  test("sends the caller's credentials and JSON, returns the parsed answer", async () => {
    const seen: Parameters<Transport>[0][] = [];
    const api = kubeApi(conn, async (request) => {
      seen.push(request);
      return { status: 201, body: '{"ok":true}' };
    });
    expect(await api.post("/api/v1/x", { a: 1 })).toEqual({ ok: true });
    expect(seen[0]).toMatchObject({
      method: "POST",
      headers: { authorization: "Bearer user-token", "content-type": "application/json" },
      body: '{"a":1}',
      tls: { ca: "CA" },
    });
  });

  test("an error answer: the call, the HTTP status and the API server's message", async () => {
    const api = kubeApi(conn, async () => ({
      status: 403,
      body: JSON.stringify({
        kind: "Status",
        status: "Failure",
        message: 'nodes is forbidden: User "u" cannot list resource "nodes"',
        code: 403,
      }),
    }));
    const error = await api.get("/api/v1/nodes").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubeApiError);
    expect(error).toMatchObject({
      status: 403,
      message: 'GET /api/v1/nodes: HTTP 403: nodes is forbidden: User "u" cannot list resource "nodes"',
    });
  });

  test("unreachable, and a body that is not JSON", async () => {
    const down = kubeApi(conn, async () => {
      throw new Error("connect ECONNREFUSED");
    });
    await expect(down.get("/api/v1/nodes")).rejects.toThrow(
      "cannot reach the API server at https://api.example:6443: connect ECONNREFUSED",
    );
    const html = kubeApi(conn, async () => ({ status: 200, body: "<html>" }));
    await expect(html.get("/api/v1/nodes")).rejects.toThrow("GET /api/v1/nodes: the answer is not JSON");
  });
});
