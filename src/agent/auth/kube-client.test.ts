import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { inClusterConnection } from "../../kube/connection";
import { connectionFromKubeconfigFile as connectionFromKubeconfig } from "../../kube/kubeconfig";
import { createKubeAuthClient } from "./kube-client";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-kube-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const kubeconfig = (user: string) => `apiVersion: v1
kind: Config
current-context: c1
contexts:
- name: c1
  context: { cluster: k1, user: u1 }
clusters:
- name: k1
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: ${Buffer.from("CA PEM").toString("base64")}
users:
- name: u1
  user:
${user}
`;

describe("connectionFromKubeconfig", () => {
  it("reads the current context's server, CA and token", () => {
    const file = path.join(dir, "kubeconfig");
    fs.writeFileSync(file, kubeconfig("    token: tok-123"));
    const conn = connectionFromKubeconfig(file);
    expect(conn.server).toBe("https://10.0.0.1:6443");
    expect(conn.ca?.()).toBe("CA PEM");
    expect(conn.token?.()).toBe("tok-123");
  });

  it("reads a tokenFile relative to the kubeconfig, each time (tokens rotate)", () => {
    const file = path.join(dir, "kubeconfig");
    fs.writeFileSync(file, kubeconfig("    tokenFile: token"));
    fs.writeFileSync(path.join(dir, "token"), "first\n");
    const conn = connectionFromKubeconfig(file);
    expect(conn.token?.()).toBe("first");
    fs.writeFileSync(path.join(dir, "token"), "second\n");
    expect(conn.token?.()).toBe("second");
  });

  it("names the file and the missing context", () => {
    const file = path.join(dir, "kubeconfig");
    fs.writeFileSync(file, kubeconfig("    token: t"));
    expect(() => connectionFromKubeconfig(file, "nope")).toThrow(`${file}: context "nope" not found`);
  });
});

describe("inClusterConnection", () => {
  it("uses KUBERNETES_SERVICE_HOST/PORT and the mounted service account", () => {
    fs.writeFileSync(path.join(dir, "token"), "sa-token\n");
    fs.writeFileSync(path.join(dir, "ca.crt"), "CLUSTER CA");
    const conn = inClusterConnection(
      { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" },
      dir,
    );
    expect(conn).toMatchObject({ server: "https://10.96.0.1:443" });
    expect(conn.ca()).toBe("CLUSTER CA");
    expect(conn.token?.()).toBe("sa-token");
  });

  it("says why it is not in a cluster", () => {
    expect(() => inClusterConnection({}, dir)).toThrow(/KUBERNETES_SERVICE_HOST is not set/);
    expect(() => inClusterConnection({ KUBERNETES_SERVICE_HOST: "h" }, dir)).toThrow(/token does not exist/);
  });
});

describe("createKubeAuthClient", () => {
  let server: http.Server;
  let url: string;
  const received: Array<{ path: string; auth: string | undefined; body: any }> = []; // eslint-disable-line @typescript-eslint/no-explicit-any -- parsed JSON, checked field by field
  let reply: (path: string, body: any) => [number, unknown]; // eslint-disable-line @typescript-eslint/no-explicit-any -- parsed JSON, checked field by field

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let text = "";
      req.on("data", (c) => (text += c));
      req.on("end", () => {
        const body = JSON.parse(text);
        received.push({ path: req.url!, auth: req.headers.authorization, body });
        const [status, out] = reply(req.url!, body);
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(out));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  beforeEach(() => (received.length = 0));

  it("posts a TokenReview with the audiences, as the agent's identity", async () => {
    reply = (_p, body) => [
      201,
      {
        ...body,
        status: {
          authenticated: true,
          user: { username: "alice", uid: "u", groups: ["g"] },
          audiences: ["aud"],
        },
      },
    ];
    const c = createKubeAuthClient({ server: url, token: () => "agent-token" });
    expect(await c.tokenReview("user-token", ["aud"])).toEqual({
      authenticated: true,
      user: { username: "alice", uid: "u", groups: ["g"] },
      audiences: ["aud"],
    });
    expect(received[0]).toEqual({
      path: "/apis/authentication.k8s.io/v1/tokenreviews",
      auth: "Bearer agent-token",
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenReview",
        spec: { token: "user-token", audiences: ["aud"] },
      },
    });
  });

  it("posts a SubjectAccessReview and reads allowed / denied", async () => {
    const c = createKubeAuthClient({ server: url });
    const attrs = { verb: "update", group: "lvm.topolvm.io", resource: "lvmnodes", name: "node-a" };
    reply = () => [201, { status: { allowed: true } }];
    expect(await c.subjectAccessReview("alice", ["g"], attrs)).toEqual({ allowed: true });
    reply = () => [201, { status: { allowed: false, denied: true, reason: "nope" } }];
    expect(await c.subjectAccessReview("alice", ["g"], attrs)).toEqual({ allowed: false, reason: "nope" });
    expect(received[0]!.body.spec).toEqual({ user: "alice", groups: ["g"], resourceAttributes: attrs });
  });

  it("fails with the HTTP status when the API server refuses the review", async () => {
    reply = () => [403, { message: "tokenreviews.authentication.k8s.io is forbidden" }];
    await expect(createKubeAuthClient({ server: url }).tokenReview("t", [])).rejects.toThrow(
      /HTTP 403: .*forbidden/,
    );
  });
});
