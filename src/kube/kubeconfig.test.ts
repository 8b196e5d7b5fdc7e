import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  connectionFromEnvKubeconfig,
  connectionFromKubeconfigs,
  connectionFromKubeconfigText,
} from "./kubeconfig";

const b64 = (text: string) => Buffer.from(text).toString("base64");
const files: Record<string, string> = {
  "/etc/k/ca.crt": "CA FROM FILE",
  "/home/me/.kube/client.crt": "CERT FROM FILE",
  "/home/me/.kube/client.key": "KEY FROM FILE",
  "/home/me/.kube/token": "file-token\n",
};
const source = {
  name: "the kubeconfig",
  baseDir: "/home/me/.kube",
  readFile: (file: string) => {
    if (!(file in files)) throw new Error(`no file ${file}`);
    return files[file]!;
  },
};

function kubeconfig(user: string, cluster = `certificate-authority-data: ${b64("CA PEM")}`): string {
  return `apiVersion: v1
kind: Config
current-context: c1
contexts:
- name: c1
  context: { cluster: k1, user: u1 }
- name: c2
  context: { cluster: k2, user: u1 }
clusters:
- name: k1
  cluster:
    server: https://10.0.0.1:6443
    ${cluster}
- name: k2
  cluster: { server: "https://other:6443", insecure-skip-tls-verify: true, tls-server-name: kubernetes }
users:
- name: u1
  user:
${user}
`;
}

describe("connectionFromKubeconfigText", () => {
  test("the current context: server, inline CA and token", () => {
    const conn = connectionFromKubeconfigText(kubeconfig("    token: tok-123"), source);
    expect(conn).toEqual({
      server: "https://10.0.0.1:6443",
      ca: expect.any(Function),
      token: expect.any(Function),
    });
    expect(conn.ca!()).toBe("CA PEM");
    expect(conn.token!()).toBe("tok-123");
  });

  test("a named context; tls-server-name and insecure-skip-tls-verify", () => {
    const conn = connectionFromKubeconfigText(kubeconfig("    token: t"), source, "c2");
    expect(conn).toMatchObject({
      server: "https://other:6443",
      tlsServerName: "kubernetes",
      insecureSkipTlsVerify: true,
    });
  });

  test("files: an absolute CA, client certificate and key and a tokenFile relative to baseDir", () => {
    const conn = connectionFromKubeconfigText(
      kubeconfig(
        ["    client-certificate: client.crt", "    client-key: client.key", "    tokenFile: token"].join(
          "\n",
        ),
        "certificate-authority: /etc/k/ca.crt",
      ),
      source,
    );
    expect(conn).toMatchObject({ cert: "CERT FROM FILE", key: "KEY FROM FILE" });
    expect(conn.ca!()).toBe("CA FROM FILE");
    expect(conn.token!()).toBe("file-token");
  });

  test("inline client certificate and key", () => {
    const conn = connectionFromKubeconfigText(
      kubeconfig(`    client-certificate-data: ${b64("CERT")}\n    client-key-data: ${b64("KEY")}`),
      source,
    );
    expect(conn).toMatchObject({ cert: "CERT", key: "KEY" });
    expect(conn.token).toBeUndefined();
  });

  test.each([
    [
      "an exec plugin of an unknown API version",
      "    exec: { apiVersion: client.authentication.k8s.io/v1alpha1, command: aws }",
      "kubeconfig the kubeconfig: users[u1].user.exec.apiVersion: client.authentication.k8s.io/v1alpha1 is not one of client.authentication.k8s.io/v1, client.authentication.k8s.io/v1beta1",
    ],
    [
      "an auth-provider",
      "    auth-provider: { name: oidc }",
      "kubeconfig the kubeconfig: users[u1].user.auth-provider: auth-provider plugins are not supported (client-go dropped its gcp and azure providers in Kubernetes 1.26); use the exec plugin that replaced it (gke-gcloud-auth-plugin, kubelogin) or a token or a client certificate",
    ],
    [
      "basic auth",
      "    username: admin\n    password: hunter2-secret",
      "kubeconfig the kubeconfig: users[u1].user.username: basic authentication is not supported; use a token or a client certificate",
    ],
  ])("refuses %s, naming the field", (_what, user, message) => {
    expect(() => connectionFromKubeconfigText(kubeconfig(user), source)).toThrow(message);
  });

  test("refuses a proxy-url", () => {
    expect(() =>
      connectionFromKubeconfigText(kubeconfig("    token: t", "proxy-url: http://proxy:3128"), source),
    ).toThrow(
      "kubeconfig the kubeconfig: clusters[k1].cluster.proxy-url: proxies are not supported; reach the API server directly",
    );
  });

  test.each([
    ["a missing context", kubeconfig("    token: t"), "nope", 'context "nope" not found'],
    ["no current-context", "contexts: []", undefined, "has no current-context; name a context"],
    [
      "a cluster without a server",
      "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\nclusters: [{name: k, cluster: {}}]",
      undefined,
      "clusters.0.cluster.server: is required",
    ],
    [
      "a missing user",
      "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\nclusters: [{name: k, cluster: {server: https://x}}]",
      undefined,
      'user "u" (of context c) not found',
    ],
  ])("names %s", (_what, text, context, message) => {
    expect(() => connectionFromKubeconfigText(text, source, context)).toThrow(
      `kubeconfig the kubeconfig: ${message}`,
    );
  });

  test("invalid YAML is reported without quoting the text (it may hold a token)", () => {
    const secret = "s3cr3t-token-value";
    let message = "";
    try {
      connectionFromKubeconfigText(`users:\n- name: u\n  user: { token: "${secret}\n`, source);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toBe("kubeconfig the kubeconfig: is not valid YAML");
  });
});

describe("several kubeconfigs (a KUBECONFIG list)", () => {
  const file = (name: string, text: string) => ({
    name,
    baseDir: "/home/me/.kube",
    readFile: source.readFile,
    text,
  });
  const a = file(
    "a",
    `current-context: ca
contexts: [{name: ca, context: {cluster: k, user: ua}}]
clusters: [{name: k, cluster: {server: "https://first:6443"}}]
users: [{name: ua, user: {token: from-a}}]`,
  );
  const b = file(
    "b",
    `current-context: cb
contexts: [{name: cb, context: {cluster: kb, user: ub}}, {name: ca, context: {cluster: kb, user: ub}}]
clusters: [{name: k, cluster: {server: "https://ignored:6443"}}, {name: kb, cluster: {server: "https://second/prefix"}}]
users: [{name: ub, user: {tokenFile: token}}]`,
  );

  test("the first current-context and the first entry of each name win", () => {
    const conn = connectionFromKubeconfigs([a, b]);
    expect(conn.server).toBe("https://first:6443");
    expect(conn.token!()).toBe("from-a");
  });

  test("a context of a later file, with its user's relative tokenFile and the server's path prefix", () => {
    const conn = connectionFromKubeconfigs([a, b], "cb");
    expect(conn.server).toBe("https://second/prefix");
    expect(conn.token!()).toBe("file-token");
  });

  test("a context in none of them names the list", () => {
    expect(() => connectionFromKubeconfigs([a, b], "nope")).toThrow(
      `kubeconfig a${path.delimiter}b: context "nope" not found`,
    );
  });

  test("KUBECONFIG from the environment: the files that exist, in order", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kubeconfig-env-"));
    try {
      fs.writeFileSync(path.join(dir, "b"), b.text);
      fs.writeFileSync(path.join(dir, "token"), "env-token\n");
      const list = [path.join(dir, "missing"), path.join(dir, "b")].join(path.delimiter);
      const conn = connectionFromEnvKubeconfig({ KUBECONFIG: list });
      expect(conn.server).toBe("https://second/prefix");
      expect(conn.token!()).toBe("env-token");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test("an exec user: a credential source, its relative command beside the kubeconfig", () => {
    const conn = connectionFromKubeconfigText(
      kubeconfig(
        "    exec: { apiVersion: client.authentication.k8s.io/v1, command: ./bin/get-token, env: null }",
      ),
      source,
    );
    expect(conn.exec).toEqual(expect.any(Function));
    expect(conn.token).toBeUndefined();
  });
});
