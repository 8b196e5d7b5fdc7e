import { connectionFromKubeconfigText } from "./kubeconfig";

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
    expect(conn).toEqual({ server: "https://10.0.0.1:6443", ca: "CA PEM", token: expect.any(Function) });
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
    expect(conn).toMatchObject({ ca: "CA FROM FILE", cert: "CERT FROM FILE", key: "KEY FROM FILE" });
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
      "an exec plugin",
      "    exec: { apiVersion: client.authentication.k8s.io/v1, command: aws }",
      "kubeconfig the kubeconfig: users[u1].user.exec: exec credential plugins are not supported; use a kubeconfig with a token (e.g. from `kubectl create token`) or a client certificate",
    ],
    [
      "an auth-provider",
      "    auth-provider: { name: oidc }",
      "kubeconfig the kubeconfig: users[u1].user.auth-provider: auth-provider plugins are not supported; use a kubeconfig with a token or a client certificate",
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
