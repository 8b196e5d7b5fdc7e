import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { execCredentialSource, type ExecConfig } from "./exec-credential";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "exec-credential-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A plugin: a node script that counts its runs, echoes KUBERNETES_EXEC_INFO to a file and prints `body`. */
function plugin(body: string, exit = 0, stderr = ""): ExecConfig {
  const script = path.join(dir, "plugin.js");
  fs.writeFileSync(
    script,
    `const fs = require("fs");
fs.appendFileSync(${JSON.stringify(path.join(dir, "runs"))}, "x");
fs.writeFileSync(${JSON.stringify(path.join(dir, "info"))}, process.env.KUBERNETES_EXEC_INFO + "|" + process.env.EXTRA);
process.stdout.write(${JSON.stringify(body)});
process.stderr.write(${JSON.stringify(stderr)});
process.exit(${exit});`,
  );
  return {
    apiVersion: "client.authentication.k8s.io/v1",
    command: process.execPath,
    args: [script],
    env: [{ name: "EXTRA", value: "from-kubeconfig" }],
  };
}
const credential = (status: object, apiVersion = "client.authentication.k8s.io/v1") =>
  JSON.stringify({ apiVersion, kind: "ExecCredential", status });
const runs = () => fs.readFileSync(path.join(dir, "runs"), "utf8").length;
const options = { what: "kubeconfig k: users[u].user.exec", cluster: { server: "https://api:6443" } };

test("runs the plugin with KUBERNETES_EXEC_INFO and its env; keeps the credential while it is valid", async () => {
  let now = Date.parse("2030-01-01T00:00:00Z");
  const source = execCredentialSource(
    {
      ...plugin(credential({ token: "t1", expirationTimestamp: "2030-01-01T00:10:00Z" })),
      provideClusterInfo: true,
    },
    { ...options, now: () => now },
  );
  const [a, b] = await Promise.all([source(), source()]);
  expect(a).toEqual({ token: "t1" });
  expect(b).toEqual({ token: "t1" });
  expect(runs()).toBe(1);
  const [info, extra] = fs.readFileSync(path.join(dir, "info"), "utf8").split("|");
  expect(JSON.parse(info!)).toEqual({
    apiVersion: "client.authentication.k8s.io/v1",
    kind: "ExecCredential",
    spec: { interactive: false, cluster: { server: "https://api:6443" } },
  });
  expect(extra).toBe("from-kubeconfig");
  now += 8 * 60_000;
  await source();
  expect(runs()).toBe(1);
  now += 60_000; // within a minute of the expiry: run again
  await source();
  expect(runs()).toBe(2);
});

test("a client certificate and key", async () => {
  const source = execCredentialSource(
    plugin(credential({ clientCertificateData: "CERT", clientKeyData: "KEY" })),
    options,
  );
  expect(await source()).toEqual({ clientCertificateData: "CERT", clientKeyData: "KEY" });
});

test.each([
  [
    "a failing plugin: command, exit code and stderr, never its output",
    () => plugin(credential({ token: "s3cret" }), 3, "token expired, run aws sso login"),
    /^kubeconfig k: users\[u\]\.user\.exec: .*node failed \(exit code 3\): token expired, run aws sso login$/,
  ],
  [
    "output that is not an ExecCredential",
    () => plugin("s3cret-not-json"),
    /^kubeconfig k: users\[u\]\.user\.exec: .*node did not print an ExecCredential \(\(the output\): /,
  ],
  [
    "another API version",
    () => plugin(credential({ token: "s3cret" }, "client.authentication.k8s.io/v1beta1")),
    /printed an ExecCredential of client\.authentication\.k8s\.io\/v1beta1, not of client\.authentication\.k8s\.io\/v1$/,
  ],
  [
    "no credential at all",
    () => plugin(credential({})),
    /printed neither a token nor a client certificate and key$/,
  ],
  [
    "a command that does not exist, with the install hint",
    (): ExecConfig => ({
      apiVersion: "client.authentication.k8s.io/v1",
      command: path.join(dir, "no-such-plugin"),
      installHint: "install it with brew",
    }),
    /no-such-plugin not found \(install it with brew\)$/,
  ],
])("%s", async (_what, config, message) => {
  const error = (await execCredentialSource(config(), options)().catch((e: unknown) => e)) as Error;
  expect(error.message).toMatch(message);
  expect(error.message).not.toContain("s3cret");
});
