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

  test("--deselection-grace: a duration, 0 allowed (delete at once); absent: the operator's default", () => {
    expect(parseOperatorConfig(["--deselection-grace", "5m"], {}).deselectionGraceMs).toBe(300_000);
    expect(parseOperatorConfig([], { PULUMI_LVM_OPERATOR_DESELECTION_GRACE: "0s" }).deselectionGraceMs).toBe(0);
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
    expect(() => parseOperatorConfig(["--kubeconfig", "/k"], {})).toThrow(/\(command line\)/);
  });
});
