import { OperatorConfigError, parseOperatorConfig } from "./config";

describe("parseOperatorConfig", () => {
  test("defaults: in-cluster, all namespaces, 0.0.0.0:8081, 2 workers, 5m resync, per-node tokens, HTTPS to the agents", () => {
    expect(parseOperatorConfig([], {})).toEqual({
      namespace: "",
      listen: { host: "0.0.0.0", port: 8081 },
      workers: 2,
      resyncMs: 300_000,
      agents: {
        namespace: "lvm-system",
        token: {},
        tls: { caFile: "/var/run/secrets/pulumi-lvm/agent-ca/ca.crt", serverName: "pulumi-lvm-agent" },
      },
    });
  });

  test("the admission webhook: served only when asked, with its certificate directory", () => {
    expect(parseOperatorConfig(["--webhook-listen", "0.0.0.0:9443"], {}).webhook).toEqual({
      host: "0.0.0.0",
      port: 9443,
      certDir: "/var/run/secrets/pulumi-lvm/webhook-tls",
    });
    expect(
      parseOperatorConfig(["--webhook-listen", "[::1]:0", "--webhook-cert-dir", "/tls"], {}).webhook,
    ).toEqual({ host: "::1", port: 0, certDir: "/tls" });
    expect(() => parseOperatorConfig(["--webhook-listen", "9443", "--webhook-cert-dir", "tls"], {})).toThrow(
      /--webhook-listen: must be HOST:PORT \(got "9443"\)\n {2}--webhook-cert-dir: must be an absolute path/,
    );
  });

  test("--lvmnode-workers: LVMNode reconciles at once, 1 to 256; absent: the operator's default", () => {
    expect(parseOperatorConfig(["--lvmnode-workers", "32"], {}).lvmNodeWorkers).toBe(32);
    expect(parseOperatorConfig([], { PULUMI_LVM_OPERATOR_LVMNODE_WORKERS: "4" }).lvmNodeWorkers).toBe(4);
    expect(parseOperatorConfig([], {}).lvmNodeWorkers).toBeUndefined();
    for (const bad of ["0", "257", "many"])
      expect(() => parseOperatorConfig(["--lvmnode-workers", bad], {})).toThrow(/--lvmnode-workers: /);
  });

  test("--provider-ready: the sets' ProviderReady condition, off by default", () => {
    expect(parseOperatorConfig(["--provider-ready"], {}).providerReady).toBe(true);
    expect(parseOperatorConfig([], { PULUMI_LVM_OPERATOR_PROVIDER_READY: "true" }).providerReady).toBe(true);
    expect(parseOperatorConfig([], {}).providerReady).toBeUndefined();
  });

  test("flags, and environment variables where no flag is given", () => {
    const c = parseOperatorConfig(
      [
        "--server",
        "https://127.0.0.1:6443",
        "--token-file",
        "/t",
        "--workers",
        "4",
        "--listen",
        "[::1]:9000",
        "--agent-namespace",
        "storage-system",
        "--agent-ca-file",
        "/agent-ca.crt",
      ],
      {
        PULUMI_LVM_OPERATOR_AGENT_TOKEN_FILE: "/agent-token",
        PULUMI_LVM_OPERATOR_CA_FILE: "/ca.crt",
        PULUMI_LVM_OPERATOR_NAMESPACE: "storage",
        PULUMI_LVM_OPERATOR_WORKERS: "9",
      },
    );
    expect(c).toEqual({
      connection: { server: "https://127.0.0.1:6443", tokenFile: "/t", caFile: "/ca.crt" },
      namespace: "storage",
      listen: { host: "::1", port: 9000 },
      workers: 4,
      resyncMs: 300_000,
      agents: {
        namespace: "storage-system",
        token: { file: "/agent-token" },
        tls: { caFile: "/agent-ca.crt", serverName: "pulumi-lvm-agent" },
      },
    });
  });

  test("--service-account, --agent-server-name, and plain HTTP only when asked for", () => {
    expect(
      parseOperatorConfig(["--service-account", "lvm/op", "--agent-server-name", "agents.example"], {})
        .agents,
    ).toEqual({
      namespace: "lvm-system",
      token: { serviceAccount: { namespace: "lvm", name: "op" } },
      tls: { caFile: "/var/run/secrets/pulumi-lvm/agent-ca/ca.crt", serverName: "agents.example" },
    });
    expect(parseOperatorConfig(["--agent-allow-plain-http"], {}).agents.tls).toBe("plain-http");
    expect(parseOperatorConfig([], { PULUMI_LVM_OPERATOR_AGENT_ALLOW_PLAIN_HTTP: "true" }).agents.tls).toBe(
      "plain-http",
    );
    expect(() => parseOperatorConfig([], { PULUMI_LVM_OPERATOR_AGENT_ALLOW_PLAIN_HTTP: "yes" })).toThrow(
      /--agent-allow-plain-http: is a switch/,
    );
    expect(() => parseOperatorConfig(["--service-account", "op"], {})).toThrow(
      /--service-account: must be NAMESPACE\/NAME/,
    );
    expect(() =>
      parseOperatorConfig(["--service-account", "lvm/op", "--agent-token-file", "/t"], {}),
    ).toThrow(/exclude each other/);
  });

  test("every problem at once, each naming its flag", () => {
    let error: OperatorConfigError | undefined;
    try {
      parseOperatorConfig(
        ["--server", "ftp://x", "--workers", "0", "--resync", "soon", "--namespace", "Bad_NS"],
        {},
      );
    } catch (e) {
      error = e as OperatorConfigError;
    }
    expect(error).toBeInstanceOf(OperatorConfigError);
    expect(error!.problems.map((p) => p.path).sort()).toEqual([
      "--namespace",
      "--resync",
      "--server",
      "--workers",
    ]);
  });

  test("--deselection-grace: a duration, 0 allowed (delete at once); absent: the operator's default", () => {
    expect(parseOperatorConfig(["--deselection-grace", "5m"], {}).deselectionGraceMs).toBe(300_000);
    expect(parseOperatorConfig([], { PULUMI_LVM_OPERATOR_DESELECTION_GRACE: "0s" }).deselectionGraceMs).toBe(
      0,
    );
    expect(parseOperatorConfig([], {}).deselectionGraceMs).toBeUndefined();
    expect(() => parseOperatorConfig(["--deselection-grace", "soon"], {})).toThrow(
      /--deselection-grace: must be a duration such as 0s, 30s, 10m, 1h \(got "soon"\)/,
    );
  });

  test("--server needs --token-file; --token-file needs --server; unknown flags are refused", () => {
    expect(() => parseOperatorConfig(["--server", "https://a:1"], {})).toThrow(
      /--token-file: --server needs --token-file/,
    );
    expect(() => parseOperatorConfig(["--token-file", "/t"], {})).toThrow(
      /--server: --token-file and --ca-file go with --server/,
    );
    expect(() => parseOperatorConfig(["--no-such-flag", "/k"], {})).toThrow(/\(command line\)/);
  });
});

test("--kubeconfig and --context: a kubeconfig instead of --server", () => {
  expect(parseOperatorConfig(["--kubeconfig", "/k", "--context", "prod"], {}).kubeconfig).toEqual({
    file: "/k",
    context: "prod",
  });
  expect(() =>
    parseOperatorConfig(["--kubeconfig", "/k", "--server", "https://a", "--token-file", "/t"], {}),
  ).toThrow(/--kubeconfig: give --server or --kubeconfig, not both/);
  expect(() => parseOperatorConfig(["--context", "prod"], {})).toThrow(
    /--context: --context goes with --kubeconfig/,
  );
});

test("--leader-elect: off by default; client-go's durations unless given; they must nest", () => {
  expect(parseOperatorConfig([], {}).leaderElection).toBeUndefined();
  expect(parseOperatorConfig(["--leader-elect"], {}).leaderElection).toEqual({
    name: "pulumi-lvm-operator",
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
  });
  expect(
    parseOperatorConfig(
      [
        "--leader-elect",
        "--leader-election-namespace",
        "lvm-system",
        "--leader-election-identity",
        "pod-a",
        "--leader-election-lease-duration",
        "3s",
        "--leader-election-renew-deadline",
        "2s",
        "--leader-election-retry-period",
        "500ms",
      ],
      {},
    ).leaderElection,
  ).toEqual({
    namespace: "lvm-system",
    name: "pulumi-lvm-operator",
    identity: "pod-a",
    leaseDurationMs: 3000,
    renewDeadlineMs: 2000,
    retryPeriodMs: 500,
  });
  expect(parseOperatorConfig([], { PULUMI_LVM_OPERATOR_LEADER_ELECT: "true" }).leaderElection).toBeDefined();
  expect(() =>
    parseOperatorConfig(["--leader-elect", "--leader-election-renew-deadline", "15s"], {}),
  ).toThrow(
    /--leader-election-renew-deadline: must be shorter than --leader-election-lease-duration \(15000 ms >= 15000 ms\): a leader that cannot renew must stop before another can take the Lease/,
  );
  expect(() => parseOperatorConfig(["--leader-election-retry-period", "10s"], {})).toThrow(
    /--leader-election-retry-period: must be shorter than --leader-election-renew-deadline/,
  );
});
