import { AgentConfigError, parseAgentConfig } from "./config";

const base = ["--node", "node-a", "--token-file", "/etc/agent/tokens"];

function problems(argv: string[], env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseAgentConfig(argv, env);
  } catch (e) {
    if (e instanceof AgentConfigError) return e.problems.map((p) => `${p.path}: ${p.message}`);
    throw e;
  }
  return [];
}

describe("parseAgentConfig", () => {
  it("fills in defaults", () => {
    expect(parseAgentConfig(base, {})).toEqual({
      node: "node-a",
      listen: { host: "127.0.0.1", port: 8080 },
      auth: { mode: "token-file", file: "/etc/agent/tokens" },
      audiences: ["pulumi-lvm-agent/node-a"],
      namespace: "lvm-system",
      authCacheTtlMs: 10_000,
      stateDir: "/var/lib/pulumi-lvm/agent",
      lvmdConfig: "/etc/topolvm/lvmd.yaml",
      commandPrefix: [],
      mountinfo: "/proc/self/mountinfo",
      probeCache: true,
      bodyLimitBytes: 1024 * 1024,
      commandTimeoutMs: 120_000,
      shutdownGraceMs: 30_000,
    });
  });

  it("reads every option", () => {
    const c = parseAgentConfig(
      [
        "--node",
        "node-a",
        "--listen",
        "[::]:9443",
        "--tls-cert",
        "/tls/crt",
        "--tls-key",
        "/tls/key",
        "--kubeconfig",
        "/kc",
        "--audience",
        "a1,a2",
        "--namespace",
        "lvm-system",
        "--auth-cache-ttl",
        "500ms",
        "--devices",
        "/dev/loop3,/dev/loop4",
        "--state-dir",
        "/s",
        "--lvmd-config",
        "/l.yaml",
        "--command-prefix",
        "nsenter -t 1 -m -u -i -n -p --",
        "--body-limit",
        "64Ki",
        "--command-timeout",
        "5m",
        "--shutdown-grace",
        "1s",
        "--command-log",
        "/log.jsonl",
        "--lvm-system-dir",
        "/lvm",
      ],
      {},
    );
    expect(c).toMatchObject({
      listen: { host: "::", port: 9443 },
      tls: { certFile: "/tls/crt", keyFile: "/tls/key" },
      auth: { mode: "kubeconfig", file: "/kc" },
      audiences: ["a1", "a2"],
      namespace: "lvm-system",
      authCacheTtlMs: 500,
      devices: ["/dev/loop3", "/dev/loop4"],
      commandPrefix: ["nsenter", "-t", "1", "-m", "-u", "-i", "-n", "-p", "--"],
      mountinfo: "/proc/1/mountinfo",
      bodyLimitBytes: 65536,
      commandTimeoutMs: 300_000,
      shutdownGraceMs: 1000,
      commandLog: "/log.jsonl",
      lvmSystemDir: "/lvm",
    });
  });

  it("the probe cache: on unless --no-probe-cache", () => {
    expect(parseAgentConfig(base, {}).probeCache).toBe(true);
    expect(parseAgentConfig([...base, "--no-probe-cache"], {}).probeCache).toBe(false);
  });

  it("the lvm shell: on with --lvm-sync-io, off with --no-lvm-shell, which means nothing without --lvm-sync-io", () => {
    expect(parseAgentConfig(base, {}).lvmShell ?? false).toBe(false);
    expect(parseAgentConfig([...base, "--lvm-sync-io"], {}).lvmShell).toBe(true);
    expect(parseAgentConfig([...base, "--lvm-sync-io", "--no-lvm-shell"], {}).lvmShell ?? false).toBe(false);
    expect(() => parseAgentConfig([...base, "--no-lvm-shell"], {})).toThrow(
      "--no-lvm-shell: is only used with --lvm-sync-io",
    );
  });

  it("--lvm-shell-writes: off by default; only with the lvm shell (--lvm-sync-io, not --no-lvm-shell)", () => {
    expect(parseAgentConfig([...base, "--lvm-sync-io"], {}).lvmShellWrites ?? false).toBe(false);
    expect(parseAgentConfig([...base, "--lvm-sync-io", "--lvm-shell-writes"], {}).lvmShellWrites).toBe(true);
    for (const args of [["--lvm-shell-writes"], ["--lvm-sync-io", "--no-lvm-shell", "--lvm-shell-writes"]])
      expect(() => parseAgentConfig([...base, ...args], {})).toThrow(
        "--lvm-shell-writes: runs writes in the lvm shell, which needs --lvm-sync-io and not --no-lvm-shell",
      );
  });

  it("--lvm-sync-io: off by default, on when given; with a command prefix only with --host-root (lvm reads the copy in another mount namespace)", () => {
    expect(parseAgentConfig(base, {}).lvmSyncIo ?? false).toBe(false);
    expect(parseAgentConfig([...base, "--lvm-sync-io"], {}).lvmSyncIo).toBe(true);
    const prefix = ["--command-prefix", "nsenter -t 1 -m --"];
    expect(() => parseAgentConfig([...base, "--lvm-sync-io", ...prefix], {})).toThrow(
      "--lvm-sync-io: with --command-prefix lvm runs in another mount namespace: give --host-root",
    );
    const config = parseAgentConfig([...base, "--lvm-sync-io", ...prefix, "--host-root", "/proc/1/root"], {});
    expect({ lvmSyncIo: config.lvmSyncIo, hostRoot: config.hostRoot }).toEqual({
      lvmSyncIo: true,
      hostRoot: "/proc/1/root",
    });
    expect(() => parseAgentConfig([...base, "--host-root", "/proc/1/root", ...prefix], {})).toThrow(
      "--host-root: is only used by --lvm-sync-io with --command-prefix",
    );
    expect(() => parseAgentConfig([...base, "--lvm-sync-io", "--host-root", "/proc/1/root"], {})).toThrow(
      "--host-root: is only used by --lvm-sync-io with --command-prefix",
    );
    expect(() => parseAgentConfig([...base, "--lvm-sync-io", ...prefix, "--host-root", "proc"], {})).toThrow(
      "--host-root: must be an absolute path",
    );
  });

  it("reads the host's mount table under a command prefix (nsenter), unless --mountinfo says otherwise", () => {
    const prefix = ["--command-prefix", "nsenter -t 1 -m -u -i -n -p --"];
    expect(parseAgentConfig([...base, ...prefix], {}).mountinfo).toBe("/proc/1/mountinfo");
    expect(
      parseAgentConfig([...base, ...prefix, "--mountinfo", "/host/proc/1/mountinfo"], {}).mountinfo,
    ).toBe("/host/proc/1/mountinfo");
    expect(() => parseAgentConfig([...base, "--mountinfo", "proc/mountinfo"], {})).toThrow(
      "--mountinfo: must be an absolute path",
    );
  });

  it("takes the node name from NODE_NAME and uses in-cluster auth inside a pod", () => {
    expect(parseAgentConfig([], { NODE_NAME: "node-b", KUBERNETES_SERVICE_HOST: "10.96.0.1" })).toMatchObject(
      {
        node: "node-b",
        auth: { mode: "in-cluster" },
      },
    );
  });

  it.each([
    [["--token-file", "/t"], "--node: is required (or set NODE_NAME)"],
    [["--node", "Node_A", "--token-file", "/t"], "--node: must be a Kubernetes node name"],
    [["--node", "n"], "--token-file: no authentication configured"],
    [[...base, "--kubeconfig", "/k"], "--kubeconfig: give --token-file or --kubeconfig, not both"],
    [[...base, "--listen", "8080"], "--listen: must be HOST:PORT"],
    [[...base, "--listen", "0.0.0.0:8080"], "--listen: 0.0.0.0 is not a loopback address: serve HTTPS"],
    [[...base, "--tls-cert", "/c"], "--tls-key: --tls-cert and --tls-key go together"],
    [[...base, "--tls-await"], "--tls-await: waits for --tls-cert and --tls-key: give them"],
    [[...base, "--devices", "/dev/loop3,/dev/../sda"], '--devices: "/dev/../sda" contains a . or .. segment'],
    [[...base, "--devices", "loop3"], '--devices: "loop3" is not under /dev/'],
    [
      [...base, "--devices", "/dev/sdb;reboot"],
      '--devices: "/dev/sdb;reboot" contains characters other than',
    ],
    [[...base, "--state-dir", "relative"], "--state-dir: must be an absolute path"],
    [[...base, "--auth-cache-ttl", "10"], "--auth-cache-ttl: must be a duration"],
    [[...base, "--body-limit", "lots"], "--body-limit: must be a quantity"],
    [[...base, "--frobnicate"], "(command line): Unknown option '--frobnicate'"],
  ])("%j → %s", (argv, message) => {
    expect(problems(argv as string[]).join("\n")).toContain(message);
  });

  it("allows plain HTTP off loopback only when asked", () => {
    expect(
      parseAgentConfig([...base, "--listen", "0.0.0.0:8080", "--allow-plain-http"], {}).listen.host,
    ).toBe("0.0.0.0");
  });
});
