import { operatorDeployment } from "./operator-workload";
import { validateSystem } from "./lvm-system-args";

const at = {
  name: "lvm-operator",
  namespace: "lvm-system",
  agentImage: "pulumi-lvm:test",
  imagePullPolicy: "IfNotPresent",
  agentTlsSecret: "lvm-agent-tls",
};

test("the operator gets 10 minutes to start and 3 minutes to answer before its liveness probe may kill it (a slow or loaded node)", () => {
  const [container] = operatorDeployment(at, { image: "pulumi-lvm:test" }).spec.template.spec.containers;
  // Without it the liveness probe (6 × 10 s) killed the operator in a loop while node was still
  // loading it on a loaded qemu node (npm run demo, 2026-11-26): the same fix as the agent's.
  expect(container!.startupProbe).toMatchObject({ httpGet: { path: "/healthz", port: "http" } });
  expect(container!.startupProbe!.periodSeconds * container!.startupProbe!.failureThreshold).toBe(600);
  // 60 s (6 × 10 s) killed a loaded emulated node's agent mid-request, and the restarts fed the load.
  expect(container!.livenessProbe.periodSeconds * container!.livenessProbe.failureThreshold).toBe(180);
  expect(container!.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "http" });
});

test("two replicas unless operator.replicas says otherwise (one for a one-node cluster)", () => {
  expect(operatorDeployment(at, { image: "pulumi-lvm:test" }).spec.replicas).toBe(2);
  expect(operatorDeployment(at, { image: "pulumi-lvm:test", replicas: 1 }).spec.replicas).toBe(1);
});

test("operator.replicas outside 1–5 or not a whole number is refused with its path, before anything is created", () => {
  for (const replicas of [0, 6, 1.5]) {
    expect(() => validateSystem("lvm", { operator: { replicas } })).toThrow(/operator\.replicas/);
  }
  expect(() => validateSystem("lvm", { operator: { replicas: 1 } })).not.toThrow();
});
