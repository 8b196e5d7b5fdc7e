import type { ControlPlane } from "./cluster";

/**
 * What a kubelet would write for a pod on its node, for tests without kubelets: phase Running, the
 * pod IP, and the Ready condition (False with a probe failure when not ready).
 */
export async function reportPodStatus(
  cp: ControlPlane,
  pod: { readonly namespace: string; readonly name: string; readonly ip: string; readonly ready: boolean },
): Promise<void> {
  const ready = pod.ready
    ? { type: "Ready", status: "True" }
    : { type: "Ready", status: "False", reason: "ContainersNotReady", message: "readiness probe failed" };
  const r = await cp.request(
    "PATCH",
    `/api/v1/namespaces/${pod.namespace}/pods/${pod.name}/status`,
    { status: { phase: "Running", podIP: pod.ip, podIPs: [{ ip: pod.ip }], conditions: [ready] } },
    undefined,
    { contentType: "application/strategic-merge-patch+json" },
  );
  if (r.status !== 200)
    throw new Error(
      `patching the status of pod ${pod.namespace}/${pod.name}: HTTP ${r.status}: ${JSON.stringify(r.body)}`,
    );
}

/**
 * Pod `name` in `default`, bound to `node` with nothing running it (no kubelet, no status): what the
 * apiserver needs before it will route logs or exec for it to the node. Creates the namespace's
 * default ServiceAccount first; throws unless the pod is created.
 */
export async function createUnrunPod(cp: ControlPlane, node: string, name: string): Promise<void> {
  await cp.request("POST", "/api/v1/namespaces/default/serviceaccounts", { metadata: { name: "default" } });
  const pod = await cp.request("POST", "/api/v1/namespaces/default/pods", {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: {
      nodeName: node,
      automountServiceAccountToken: false,
      containers: [{ name: "main", image: "unused" }],
    },
  });
  if (pod.status !== 201)
    throw new Error(`creating pod ${name}: HTTP ${pod.status}: ${JSON.stringify(pod.body)}`);
}
