/**
 * The image's operator as LvmSystem runs it: the image's own user (65532, non-root), against a real
 * kube-apiserver (test/env), turning an LVMNodeSet into LVMNodes.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { ControlPlane, startControlPlane } from "../env/cluster";
import { freePort } from "../net";
import { eventually, lvmNodes, must, nodeSet, prepareCluster, setsPath } from "../operator/env";
import { request } from "../support/agent/http";
import { Podman, requireImageTier, uidsOf } from "./podman";

jest.setTimeout(300_000);

const NS = "image-ops";
let podman: Podman;
let cp: ControlPlane;
beforeAll(async () => {
  requireImageTier();
  podman = new Podman("operator");
  podman.load();
  cp = await startControlPlane();
  await prepareCluster(cp);
  await must(cp, "POST", "/api/v1/namespaces", { metadata: { name: NS } });
  await cp.createNode("img-n1", { role: "storage" });
  await cp.createNode("img-n2", { role: "compute" });
}, 300_000);
afterAll(async () => {
  podman?.cleanup();
  await cp?.stop();
});

test("the operator runs as 65532, becomes ready against the API server and creates the LVMNodes", async () => {
  // What the pod gets from Kubernetes, readable by a non-root user: its API token, the CA, the agent token.
  const secrets = path.join(podman.dir, "secrets");
  fs.mkdirSync(secrets, { mode: 0o755 });
  fs.writeFileSync(path.join(secrets, "token"), cp.tokens.operator, { mode: 0o644 });
  fs.writeFileSync(path.join(secrets, "ca.crt"), cp.caPem, { mode: 0o644 });
  fs.writeFileSync(path.join(secrets, "agent-token"), "unused-here", { mode: 0o644 });
  const port = await freePort();
  const id = podman.start(
    [
      "--read-only",
      "--cap-drop",
      "ALL",
      "--security-opt",
      "no-new-privileges",
      "--volume",
      `${secrets}:/secrets:ro`,
    ],
    [
      "operator",
      "--server",
      cp.url,
      "--token-file",
      "/secrets/token",
      "--ca-file",
      "/secrets/ca.crt",
      "--agent-token-file",
      "/secrets/agent-token",
      "--namespace",
      NS,
      "--agent-namespace",
      "lvm-system",
      "--listen",
      `127.0.0.1:${port}`,
    ],
  );
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    `operator /readyz\n${podman.logs(id)}`,
    () =>
      request(url, "GET", "/readyz", { timeoutMs: 2000 }).then(
        (r) => r.status === 200,
        () => false,
      ),
    90_000,
    250,
  );
  expect(uidsOf(podman.pid(id))).toBe("65532 65532");

  await must(cp, "POST", setsPath(NS), nodeSet(NS, "fast", ["storage"]));
  const created = await eventually(
    "an LVMNode for img-n1",
    async () => {
      const found = await lvmNodes(cp, NS);
      return found.size === 1 ? found : undefined;
    },
    60_000,
  );
  expect([...created.keys()]).toEqual(["img-n1"]);
  podman.run(["stop", "--time", "10", id]);
  expect(podman.run(["inspect", "--format", "{{.State.ExitCode}}", id]).stdout.trim()).toBe("0");
});
