/**
 * The apiserver → kubelet CONNECT proxy (kubelet-proxy.ts): a routed node address is tunnelled to
 * its forwarded port, byte for byte; anything else is refused with 403 and recorded. And the real
 * kube-apiserver, given the proxy's egress selector configuration, dials a node through it both
 * for logs and for exec (its exec streams ignore HTTPS_PROXY: they dialled the node's name directly).
 */
import * as http from "node:http";
import * as net from "node:net";
import { startControlPlane } from "../env/cluster";
import { startKubeletProxy, type KubeletProxy } from "./kubelet-proxy";
import { podExec } from "./pod-exec";

let proxy: KubeletProxy;
let echo: net.Server;
let echoPort = 0;

beforeAll(async () => {
  proxy = await startKubeletProxy();
  echo = net.createServer((s) => s.pipe(s));
  await new Promise<void>((r) => echo.listen(0, "127.0.0.1", () => r()));
  echoPort = (echo.address() as net.AddressInfo).port;
  proxy.route("10.0.2.15", 10250, echoPort);
});

afterAll(async () => {
  await proxy.close();
  await new Promise((r) => echo.close(r));
});

function connect(target: string): Promise<{ status: number; socket: net.Socket }> {
  const url = new URL(proxy.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method: "CONNECT", path: target });
    req.on("connect", (res, socket) => resolve({ status: res.statusCode ?? 0, socket }));
    req.on("error", reject);
    req.end();
  });
}

test("a routed node address is tunnelled to its forwarded port", async () => {
  const { status, socket } = await connect("10.0.2.15:10250");
  expect(status).toBe(200);
  const back = await new Promise<string>((resolve) => {
    socket.once("data", (d) => resolve(d.toString()));
    socket.write("ping");
  });
  socket.destroy();
  expect(back).toBe("ping");
});

test("any other target is refused and recorded", async () => {
  const { status, socket } = await connect("10.0.2.15:22");
  socket.destroy();
  expect(status).toBe(403);
  expect(proxy.refused).toContain("10.0.2.15:22");
});

test("the apiserver's logs and exec requests to a node both go through the proxy's egress selector", async () => {
  const own = await startKubeletProxy();
  const cp = await startControlPlane({
    kubeletClientCert: true,
    apiserverFlags: [`--egress-selector-config-file=${own.egressConfigFile}`],
  });
  try {
    await cp.createNode("unrouted-node");
    await cp.request("PATCH", "/api/v1/nodes/unrouted-node/status", {
      status: {
        addresses: [{ type: "Hostname", address: "unrouted-node" }],
        daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      },
    });
    await cp.request("POST", "/api/v1/namespaces/default/serviceaccounts", { metadata: { name: "default" } });
    const pod = await cp.request("POST", "/api/v1/namespaces/default/pods", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p" },
      spec: {
        nodeName: "unrouted-node",
        automountServiceAccountToken: false,
        containers: [{ name: "main", image: "unused" }],
      },
    });
    expect(pod.status).toBe(201);
    const logs = await cp.request("GET", "/api/v1/namespaces/default/pods/p/log");
    expect(JSON.stringify(logs.body)).toContain("while dialing unrouted-node:10250, code 403");
    expect(own.refused).toEqual(["unrouted-node:10250"]);
    const api = { url: cp.url, caPem: cp.caPem, token: cp.tokens.admin };
    await expect(podExec(api, "default", "p", ["id"])).rejects.toThrow(
      "while dialing unrouted-node:10250, code 403",
    );
    expect(own.refused).toEqual(["unrouted-node:10250", "unrouted-node:10250"]);
  } finally {
    await cp.stop();
    await own.close();
  }
}, 120_000);
