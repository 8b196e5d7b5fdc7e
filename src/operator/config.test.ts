import { OperatorConfigError, parseOperatorConfig } from "./config";

describe("parseOperatorConfig", () => {
  test("defaults: in-cluster, all namespaces, 0.0.0.0:8081, 2 workers, 5m resync, projected agent token", () => {
    expect(parseOperatorConfig([], {})).toEqual({
      namespace: "",
      listen: { host: "0.0.0.0", port: 8081 },
      workers: 2,
      resyncMs: 300_000,
      agents: { namespace: "lvm-system", tokenFile: "/var/run/secrets/pulumi-lvm/agent-token/token" },
    });
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
      agents: { namespace: "storage-system", tokenFile: "/agent-token", caFile: "/agent-ca.crt" },
    });
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
