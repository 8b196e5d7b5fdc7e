import { parseOperatorConfig } from "../config";
import { FakeKube } from "../../../test/support/kube/fake-kube";
import { ManualClock } from "../../../test/support/kube/manual-clock";
import { Registry } from "../../metrics/prometheus";
import { leaderElectorFor, operatorUserAgent, registerLeaderMetrics, replicaIdentity } from "./replica";

const metricsText = async (elector: Parameters<typeof registerLeaderMetrics>[1], identity: string) => {
  const registry = new Registry();
  registerLeaderMetrics(registry, elector, identity);
  return registry.metrics();
};

const deps = { kube: new FakeKube(), clock: new ManualClock(), log: () => undefined, identity: "pod-a_1" };

test("no --leader-elect: no elector, and the replica says it leads", async () => {
  expect(leaderElectorFor(parseOperatorConfig([], {}), deps)).toBeUndefined();
  expect(await metricsText(undefined, "pod-a_1")).toContain(
    'pulumi_lvm_operator_leader{identity="pod-a_1"} 1',
  );
});

test("the Lease's namespace: the flag's, else the pod's own; neither: the flag is named", () => {
  const config = parseOperatorConfig(["--leader-elect"], {});
  expect(() => leaderElectorFor(config, { ...deps, podNamespace: () => undefined })).toThrow(
    /--leader-election-namespace: not given, and \/var\/run\/secrets\/kubernetes.io\/serviceaccount\/namespace \(a pod's own namespace\) cannot be read/,
  );
  expect(leaderElectorFor(config, { ...deps, podNamespace: () => "lvm-system" })).toBeDefined();
});

test("a standby's metrics: not leading, and who holds the Lease as last read", async () => {
  const elector = leaderElectorFor(
    parseOperatorConfig(["--leader-elect", "--leader-election-namespace", "x"], {}),
    deps,
  )!;
  const text = await metricsText(elector, "pod-a_1");
  expect(text).toContain("# TYPE pulumi_lvm_operator_leader gauge");
  expect(text).toContain('pulumi_lvm_operator_leader{identity="pod-a_1"} 0');
  expect(text).toContain('pulumi_lvm_operator_lease_holder{holder=""} 1');
});

test("identity: the flag's, else hostname_uuid, unique per start; the User-Agent names it", () => {
  expect(
    replicaIdentity(parseOperatorConfig(["--leader-elect", "--leader-election-identity", "me"], {})),
  ).toBe("me");
  const a = replicaIdentity(parseOperatorConfig([], {}));
  expect(a).toMatch(/^.+_[0-9a-f-]{36}$/);
  expect(replicaIdentity(parseOperatorConfig([], {}))).not.toBe(a);
  expect(operatorUserAgent("me")).toMatch(/^pulumi-lvm-operator\/\S+ \(me\)$/);
});
