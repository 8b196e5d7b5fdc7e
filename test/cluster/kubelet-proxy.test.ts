/**
 * The apiserver → guest CONNECT proxy (kubelet-proxy.ts) and the node's pod relay (pod-relay.mjs,
 * run here with this node on 127.0.0.1, as the guest runs it on its forwarded port): a routed node
 * address is tunnelled to its forwarded port, byte for byte; with the relay, a target inside the pod
 * CIDR is tunnelled through it and anything else is refused with 403 and recorded; without it,
 * everything but a kubelet is refused. And the real kube-apiserver, given the proxy's egress
 * selector configuration, dials a node through it both for logs and for exec (its exec streams
 * ignore HTTPS_PROXY: they dialled the node's name directly).
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as http from "node:http";
import * as net from "node:net";
import * as readline from "node:readline";
import { startControlPlane } from "../env/cluster";
import { createUnrunPod } from "../env/kubelet-stand-in";
import { POD_RELAY, startKubeletProxy, type KubeletProxy } from "./kubelet-proxy";
import { execApiOf, podExec } from "./pod-exec";

let proxy: KubeletProxy;
let relayed: KubeletProxy;
let relay: ChildProcess;
let relayPort = 0;
let echo: net.Server;
let echoPort = 0;
/** A port nothing listens on (a closed server's). */
let closedPort = 0;

beforeAll(async () => {
  echo = net.createServer((s) => s.pipe(s));
  await new Promise<void>((r) => echo.listen(0, "127.0.0.1", () => r()));
  echoPort = (echo.address() as net.AddressInfo).port;
  const closed = net.createServer();
  await new Promise<void>((r) => closed.listen(0, "127.0.0.1", () => r()));
  closedPort = (closed.address() as net.AddressInfo).port;
  await new Promise((r) => closed.close(r));

  proxy = await startKubeletProxy();
  proxy.route("10.0.2.15", 10250, echoPort);

  // The "pod network" here is 127.0.0.0/8, where the echo server is.
  relay = spawn(process.execPath, [POD_RELAY, "127.0.0.1:0", "127.0.0.0/8"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  relayPort = await new Promise<number>((resolve, reject) => {
    relay.once("exit", (code) => reject(new Error(`pod-relay.mjs exited ${code}`)));
    readline.createInterface({ input: relay.stdout! }).on("line", (l) => {
      const m = JSON.parse(l) as { listening?: number };
      if (m.listening) resolve(m.listening);
    });
  });
  relayed = await startKubeletProxy();
  relayed.route("10.0.2.15", 10250, echoPort);
  relayed.relayPods(relayPort);
});

afterAll(async () => {
  await proxy.close();
  await relayed.close();
  relay?.kill();
  await new Promise((r) => echo.close(r));
});

function connect(p: KubeletProxy, target: string): Promise<{ status: number; socket: net.Socket }> {
  const url = new URL(p.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method: "CONNECT", path: target });
    req.on("connect", (res, socket) => resolve({ status: res.statusCode ?? 0, socket }));
    req.on("error", reject);
    req.end();
  });
}

async function roundTrip(socket: net.Socket): Promise<string> {
  const back = await new Promise<string>((resolve) => {
    socket.once("data", (d) => resolve(d.toString()));
    socket.write("ping");
  });
  socket.destroy();
  return back;
}

test("a routed node address is tunnelled to its forwarded port", async () => {
  const { status, socket } = await connect(proxy, "10.0.2.15:10250");
  expect(status).toBe(200);
  expect(await roundTrip(socket)).toBe("ping");
});

test("without the pod relay, any other target is refused and recorded", async () => {
  const { status, socket } = await connect(proxy, "10.0.2.15:22");
  socket.destroy();
  expect(status).toBe(403);
  expect(proxy.refused).toContain("10.0.2.15:22");
  const pod = await connect(proxy, `127.0.0.1:${echoPort}`);
  pod.socket.destroy();
  expect(pod.status).toBe(403);
});

describe("with the pod relay", () => {
  test("a target inside the pod CIDR is tunnelled through the relay, byte for byte", async () => {
    const { status, socket } = await connect(relayed, `127.0.0.1:${echoPort}`);
    expect(status).toBe(200);
    expect(await roundTrip(socket)).toBe("ping");
  });

  test("a kubelet is still reached directly", async () => {
    const { status, socket } = await connect(relayed, "10.0.2.15:10250");
    expect(status).toBe(200);
    expect(await roundTrip(socket)).toBe("ping");
  });

  // Targets as functions: echoPort is known only after beforeAll.
  test.each([
    ["the node's own other ports", () => "10.0.2.15:22"],
    ["an address just outside the CIDR", () => "128.0.0.1:443"],
    ["a Service's ClusterIP", () => "10.0.0.1:443"],
    ["a hostname (pods are dialled by IP)", () => `localhost:${echoPort}`],
    ["no port", () => "127.0.0.1"],
  ])("the relay refuses %s with 403, recorded", async (_what, targetOf) => {
    const target = targetOf();
    const { status, socket } = await connect(relayed, target);
    socket.destroy();
    expect(status).toBe(403);
    expect(relayed.refused).toContain(target);
  });

  test("a pod address nothing listens on answers 502, not a hang", async () => {
    const { status, socket } = await connect(relayed, `127.0.0.1:${closedPort}`);
    socket.destroy();
    expect(status).toBe(502);
  });

  test("the relay answers only CONNECT", async () => {
    const r = await fetch(`http://127.0.0.1:${relayPort}/`);
    expect(r.status).toBe(405);
  });
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
    await createUnrunPod(cp, "unrouted-node", "p");
    const logs = await cp.request("GET", "/api/v1/namespaces/default/pods/p/log");
    expect(JSON.stringify(logs.body)).toContain("while dialing unrouted-node:10250, code 403");
    expect(own.refused).toEqual(["unrouted-node:10250"]);
    await expect(podExec(execApiOf(cp), "default", "p", ["id"])).rejects.toThrow(
      "while dialing unrouted-node:10250, code 403",
    );
    expect(own.refused).toEqual(["unrouted-node:10250", "unrouted-node:10250"]);
  } finally {
    await cp.stop();
    await own.close();
  }
}, 120_000);
