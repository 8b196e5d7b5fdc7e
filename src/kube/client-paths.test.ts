import { createKubeClient } from "./client";
import { apiUrl } from "./connection";
import { KubeApiError } from "./errors";
import type { Transport } from "./http";

const conn = { server: "https://api.example:6443", ca: () => "CA", token: () => "user-token" };
const kubeApi = (connection: typeof conn, transport: Transport) =>
  createKubeClient({ connection, transport });

test("apiUrl keeps the server's path prefix and the query", () => {
  expect(
    apiUrl({ server: "https://rancher/k8s/clusters/c-1/" }, "/api/v1/pods?labelSelector=a%3Db").href,
  ).toBe("https://rancher/k8s/clusters/c-1/api/v1/pods?labelSelector=a%3Db");
  expect(apiUrl(conn, "/api/v1/nodes").href).toBe("https://api.example:6443/api/v1/nodes");
});

describe("getPath and postPath", () => {
  test("sends the caller's credentials and JSON, returns the parsed answer", async () => {
    const seen: Parameters<Transport>[0][] = [];
    const api = kubeApi(conn, async (request) => {
      seen.push(request);
      return { status: 201, body: '{"ok":true}' };
    });
    expect(await api.postPath("/api/v1/x", { a: 1 })).toEqual({ ok: true });
    expect(seen[0]).toMatchObject({
      method: "POST",
      headers: { authorization: "Bearer user-token", "content-type": "application/json" },
      body: '{"a":1}',
      tls: { ca: "CA" },
    });
  });

  test("a server with a path prefix: every request goes below it", async () => {
    const seen: string[] = [];
    const api = kubeApi({ ...conn, server: "https://rancher/k8s/clusters/c-1" }, async (request) => {
      seen.push(request.url.href);
      return { status: 200, body: '{"items":[],"metadata":{"resourceVersion":"7"}}' };
    });
    await api.getPath("/api/v1/nodes");
    await api.list({ group: "", version: "v1", plural: "nodes", kind: "Node", namespaced: false }, undefined);
    expect(seen).toEqual([
      "https://rancher/k8s/clusters/c-1/api/v1/nodes",
      "https://rancher/k8s/clusters/c-1/api/v1/nodes?limit=500",
    ]);
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
    const error = await api.getPath("/api/v1/nodes").catch((e: unknown) => e);
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
    await expect(down.getPath("/api/v1/nodes")).rejects.toThrow(
      "cannot reach the API server at https://api.example:6443: connect ECONNREFUSED",
    );
    const html = kubeApi(conn, async () => ({ status: 200, body: "<html>" }));
    await expect(html.getPath("/api/v1/nodes")).rejects.toThrow("GET /api/v1/nodes: the answer is not JSON");
  });

  test("getText: a text answer as it came (a pod's log); an error answer as getPath's", async () => {
    const log = "line 1\nline 2\n";
    const api = kubeApi(conn, async (request) =>
      request.url.pathname.endsWith("/log")
        ? { status: 200, body: log }
        : { status: 404, body: JSON.stringify({ kind: "Status", message: 'pods "x" not found', code: 404 }) },
    );
    expect(await api.getText("/api/v1/namespaces/ns/pods/p/log?tailLines=2")).toBe(log);
    await expect(api.getText("/api/v1/namespaces/ns/pods/x")).rejects.toMatchObject({
      status: 404,
      message: 'GET /api/v1/namespaces/ns/pods/x: HTTP 404: pods "x" not found',
    });
  });
});

test("userAgent: sent with every request when given (audit logs tell replicas apart by it), none otherwise", async () => {
  const seen: Array<Record<string, string>> = [];
  const transport: Transport = async (request) => {
    seen.push({ ...request.headers });
    return { status: 200, body: "{}" };
  };
  await createKubeClient({ connection: conn, transport, userAgent: "pulumi-lvm-operator/1 (pod-a)" }).getPath(
    "/x",
  );
  await createKubeClient({ connection: conn, transport }).getPath("/x");
  expect(seen[0]!["user-agent"]).toBe("pulumi-lvm-operator/1 (pod-a)");
  expect(seen[1]!["user-agent"]).toBeUndefined();
});
