/**
 * The apiserver → kubelet CONNECT proxy (kubelet-proxy.ts): a routed node address is tunnelled to
 * its forwarded port, byte for byte; anything else is refused with 403 and recorded.
 */
import * as http from "node:http";
import * as net from "node:net";
import { startKubeletProxy, type KubeletProxy } from "./kubelet-proxy";

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
