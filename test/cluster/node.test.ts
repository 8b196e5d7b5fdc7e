/**
 * The node of the real-cluster tier: a real kubelet + containerd in the qemu guest registers with
 * the test control plane, becomes Ready, runs a pod from a locally imported image, and the pod's
 * log comes back through the apiserver (apiserver → kubelet, as `kubectl logs`), with its
 * service-account token mounted and the `kubernetes` Service in its environment.
 *
 *   npm run test:cluster -- test/cluster/node.test.ts
 */
import { Cluster, startCluster } from "./cluster";
import { requireClusterBinaries } from "./binaries";
import { PAUSE_IMAGE, pauseImage, TOOLS_IMAGE, toolsImage } from "./images";
import { apply, waitPodPhase } from "./objects";

const GiB = 1024 ** 3;
jest.setTimeout(600_000);
let cluster: Cluster | undefined;
const started: Record<string, number> = {};

beforeAll(async () => {
  const bins = requireClusterBinaries();
  const t0 = Date.now();
  const images = [await pauseImage(bins), await toolsImage()];
  started.imagesMs = Date.now() - t0;
  cluster = await startCluster({
    disks: [{ sizeBytes: 2 * GiB, serial: "SN-NODE-A" }],
    images,
    sandboxImage: PAUSE_IMAGE,
  });
}, 900_000);

afterAll(async () => {
  if (cluster) {
    console.log(`cluster timings (ms from start): ${JSON.stringify({ ...started, ...cluster.timings })}`);
  }
  await cluster?.stop();
}, 180_000);

function need(): Cluster {
  if (!cluster) throw new Error("the cluster did not start (see the beforeAll error)");
  return cluster;
}

test("the node is Ready with the kubelet's version and the guest's address", async () => {
  const c = need();
  const node = (await c.cp.request("GET", `/api/v1/nodes/${c.nodeName}`)).body;
  expect(node.status.nodeInfo.kubeletVersion).toBe("v1.37.1");
  expect(node.status.nodeInfo.containerRuntimeVersion).toMatch(/^containerd:\/\/v?2\.4\.2$/);
  expect(node.status.addresses).toContainEqual({ type: "InternalIP", address: "10.0.2.15" });
  expect(node.status.conditions.find((x: { type: string }) => x.type === "Ready").status).toBe("True");
});

test("a pod runs and its log comes back through the apiserver", async () => {
  const c = need();
  const t0 = Date.now();
  await apply(c.cp, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "hello", namespace: "default" },
    spec: {
      restartPolicy: "Never",
      containers: [
        {
          name: "main",
          image: TOOLS_IMAGE,
          imagePullPolicy: "Never",
          command: [
            "/bin/sh",
            "-c",
            // The service-account token and CA are mounted; the kubernetes Service routes to the apiserver.
            'echo "hello from $(cat /proc/sys/kernel/hostname)"; ' +
              "ls /var/run/secrets/kubernetes.io/serviceaccount/token && " +
              'echo "service: $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT"; ' +
              "echo data | sha256sum",
          ],
        },
      ],
    },
  });
  const pod = await waitPodPhase(c.cp, "default", "hello", ["Succeeded", "Failed"], 420_000);
  started.podToDoneMs = Date.now() - t0;
  const log = await c.podLogs("default", "hello");
  expect({ phase: pod.status.phase, log }).toEqual({
    phase: "Succeeded",
    log: expect.stringContaining("hello from hello"),
  });
  expect(log).toContain("service: 10.0.0.1:443");
  expect(log).toContain("6667b2d1aab6a00caa5aee5af8ad9f1465e567abf1c209d15727d57b3e8f6e5f");
});
