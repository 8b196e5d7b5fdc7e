/** TLS and kubeconfig files for the agent's integration tests, made with openssl. */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

/** A throw-away CA and a serving certificate for 127.0.0.1/localhost signed by it (openssl). */
export function makeTls(dir: string): { ca: string; cert: string; key: string } {
  const run = (args: string[]) =>
    execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  run([
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
    "-days",
    "1",
    "-subj",
    "/CN=agent-test-ca",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  fs.writeFileSync(
    path.join(dir, "serving.ext"),
    "basicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n",
  );
  run(["req", ...ec, "-keyout", "serving.key", "-out", "serving.csr", "-subj", "/CN=127.0.0.1"]);
  run([
    "x509",
    "-req",
    "-in",
    "serving.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "serving.crt",
    "-days",
    "1",
    "-extfile",
    "serving.ext",
  ]);
  return {
    ca: path.join(dir, "ca.crt"),
    cert: path.join(dir, "serving.crt"),
    key: path.join(dir, "serving.key"),
  };
}

/** A kubeconfig for `server` with a CA file and a bearer token. */
export function writeKubeconfig(file: string, server: string, caFile: string, token: string): void {
  const ca = fs.readFileSync(caFile).toString("base64");
  fs.writeFileSync(
    file,
    [
      "apiVersion: v1",
      "kind: Config",
      "current-context: c",
      "contexts: [{name: c, context: {cluster: k, user: u}}]",
      `clusters: [{name: k, cluster: {server: "${server}", certificate-authority-data: ${ca}}}]`,
      `users: [{name: u, user: {token: "${token}"}}]`,
      "",
    ].join("\n"),
    { mode: 0o600 },
  );
}
