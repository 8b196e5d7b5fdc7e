import { operatorDeployment } from "./operator-workload";

const at = {
  name: "lvm-operator",
  namespace: "lvm-system",
  agentImage: "pulumi-lvm:test",
  imagePullPolicy: "IfNotPresent",
  agentTlsSecret: "lvm-agent-tls",
};

test("the operator gets 5 minutes to start before its liveness probe may kill it (a slow or loaded node)", () => {
  const [container] = operatorDeployment(at, { image: "pulumi-lvm:test" }).spec.template.spec.containers;
  // Without it the liveness probe (6 × 10 s) killed the operator in a loop while node was still
  // loading it on a loaded qemu node (npm run demo, 2026-11-26): the same fix as the agent's.
  expect(container!.startupProbe).toMatchObject({ httpGet: { path: "/healthz", port: "http" } });
  expect(container!.startupProbe!.periodSeconds * container!.startupProbe!.failureThreshold).toBe(300);
  expect(container!.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "http" });
});
