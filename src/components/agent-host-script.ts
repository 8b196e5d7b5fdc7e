/**
 * The shell scripts AgentHost runs on a bare host over SSH (pure: text in, text out). They install,
 * start and remove the pulumi-lvm node agent and nothing else: no lvm command runs here, the disks
 * are only ever changed by the agent applying a plan the user previewed.
 */

/** What the scripts need to know; every value is shell-quoted where it is used. */
export interface AgentHostScriptInput {
  /** The node name the agent serves (its --node, the token's scope). */
  readonly node: string;
  /** Where the bundle was copied to (the CopyToRemote's remotePath). */
  readonly bundlePath: string;
  /** sha256 of the bundle: the release directory's name. */
  readonly bundleHash: string;
  /** Port the agent listens on (all addresses, TLS). */
  readonly port: number;
  /** Names and addresses the serving certificate is for (besides localhost and 127.0.0.1). */
  readonly certificateNames: readonly string[];
  /** `sudo -n` before privileged commands (a non-root SSH user). */
  readonly sudo: boolean;
  /** The agent's --devices (the only devices lvm may see), when limited. */
  readonly devices?: readonly string[];
  /** The lowest Node.js major the agent runs on (the package's engines). */
  readonly nodeMajor: number;
  /** A directory every path is put under, and no systemd (tests run the scripts locally). @default "" */
  readonly root?: string;
}

/** Where things live on the host. The state directory (the agent's journal) is kept on delete. */
export const AGENT_HOST_PATHS = {
  install: "/opt/pulumi-lvm",
  unit: "/etc/systemd/system/pulumi-lvm-agent.service",
  state: "/var/lib/pulumi-lvm/agent",
  log: "/var/log/pulumi-lvm-agent.log",
} as const;

function pathsOf(input: AgentHostScriptInput): Record<keyof typeof AGENT_HOST_PATHS, string> {
  const root = input.root ?? "";
  const p = AGENT_HOST_PATHS;
  return { install: root + p.install, unit: root + p.unit, state: root + p.state, log: root + p.log };
}

/**
 * Stops the supervised agent of a pid file (no systemd): SIGTERM to the supervisor's process group
 * (the supervisor and the agent; by sh's own kill, the same on every host), then waits up to 30 s.
 */
const STOP_PID = `stop_pid() {
  $S test -s "$1" || return 0
  pid=$($S cat "$1")
  $S sh -c 'kill -TERM -"$1"' sh "$pid" 2>/dev/null || return 0
  i=0
  while $S sh -c 'kill -0 -"$1"' sh "$pid" 2>/dev/null && [ $i -lt 60 ]; do sleep 0.5; i=$((i + 1)); done
}
`;

/** Quotes one word for POSIX sh. */
export function shQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

const certScript = `
const forge = require(process.argv[1]);
const names = JSON.parse(process.argv[2]);
const keys = forge.pki.rsa.generateKeyPair(2048);
const cert = forge.pki.createCertificate();
cert.publicKey = keys.publicKey;
cert.serialNumber = "01" + forge.util.bytesToHex(forge.random.getBytesSync(15));
cert.validity.notBefore = new Date(Date.now() - 60000);
cert.validity.notAfter = new Date(Date.now() + 10 * 365 * 24 * 3600 * 1000);
const subject = [{ name: "commonName", value: "pulumi-lvm-agent " + names[0] }];
cert.setSubject(subject);
cert.setIssuer(subject);
const ip = /^[0-9.]+$|:/;
cert.setExtensions([
  { name: "basicConstraints", cA: true, critical: true },
  { name: "keyUsage", digitalSignature: true, keyEncipherment: true, keyCertSign: true, critical: true },
  { name: "extKeyUsage", serverAuth: true },
  { name: "subjectAltName", altNames: names.map((n) => (ip.test(n) ? { type: 7, ip: n } : { type: 2, value: n })) },
]);
cert.sign(keys.privateKey, forge.md.sha256.create());
require("fs").writeFileSync(process.argv[3], forge.pki.privateKeyToPem(keys.privateKey), { mode: 0o600 });
require("fs").writeFileSync(process.argv[4], forge.pki.certificateToPem(cert));
`;

const readyScript = `
const https = require("https");
const ca = require("fs").readFileSync(process.argv[2]);
const deadline = Date.now() + 60000;
const attempt = () => {
  const req = https.get({ host: "127.0.0.1", port: Number(process.argv[1]), path: "/readyz", ca, servername: "localhost", timeout: 3000 }, (res) => {
    res.resume();
    if (res.statusCode === 200) process.exit(0);
    retry("readyz answered " + res.statusCode);
  });
  req.on("error", (e) => retry(e.message));
  req.on("timeout", () => req.destroy(new Error("timed out")));
};
const retry = (why) => {
  if (Date.now() > deadline) { console.error(why); process.exit(1); }
  setTimeout(attempt, 500);
};
attempt();
`;

const tokenScript = `process.stdout.write(require("crypto").randomBytes(32).toString("hex"))`;

const outputScript = `
const fs = require("fs");
const [url, token, ca] = process.argv.slice(1);
process.stdout.write(JSON.stringify({ url, token: fs.readFileSync(token, "utf8").split(",")[0], caCertificate: fs.readFileSync(ca, "utf8") }));
`;

/**
 * Installs the bundle as a release (by hash), makes it current, creates the token and the serving
 * certificate once (kept across upgrades), writes and (re)starts the systemd unit (or, without
 * systemd, a detached supervisor shell that starts the agent again when it fails, as the unit's
 * Restart=on-failure, its process group in a pid file), waits for /readyz and prints
 * `{"url","token","caCertificate"}` on stdout, nothing else. Fails with a message naming the node.
 */
export function installScript(input: AgentHostScriptInput, url: string): string {
  const p = pathsOf(input);
  const release = `${p.install}/releases/${input.bundleHash}`;
  const names = JSON.stringify([input.node, ...input.certificateNames, "localhost", "127.0.0.1"]);
  const args = [
    "agent",
    "--node",
    input.node,
    "--listen",
    `0.0.0.0:${input.port}`,
    "--tls-cert",
    `${p.install}/etc/tls.crt`,
    "--tls-key",
    `${p.install}/etc/tls.key`,
    "--token-file",
    `${p.install}/etc/tokens`,
    "--state-dir",
    p.state,
    ...(input.devices?.length ? ["--devices", input.devices.join(",")] : []),
  ];
  const main = `${p.install}/current/dist/src/cli/main.js`;
  return `set -eu
say() { echo "pulumi-lvm AgentHost ${input.node}: $*" >&2; }
S=${input.sudo ? '"sudo -n"' : '""'}
${STOP_PID}NODE=$(command -v node || true)
[ -n "$NODE" ] || { say "no node (Node.js >= ${input.nodeMajor}) on this host (PATH=$PATH); install Node.js ${input.nodeMajor}+ first"; exit 3; }
major=$("$NODE" -p 'process.versions.node.split(".")[0]')
[ "$major" -ge ${input.nodeMajor} ] || { say "node $("$NODE" --version) at $NODE is too old: the agent needs Node.js >= ${input.nodeMajor}"; exit 3; }
[ -z "$S" ] || $S true 2>/dev/null || { say "sudo -n does not work for $(id -un) (passwordless sudo is needed)"; exit 3; }
[ -f ${shQuote(input.bundlePath)} ] || { say "the bundle ${input.bundlePath} is missing"; exit 3; }
$S mkdir -p ${shQuote(release)} ${shQuote(p.install + "/etc")} ${shQuote(p.state)}
$S chmod 700 ${shQuote(p.install + "/etc")}
if [ ! -f ${shQuote(release + "/package/package.json")} ]; then
  $S tar -xzf ${shQuote(input.bundlePath)} -C ${shQuote(release)}
fi
[ -f ${shQuote(release + "/package/node_modules/node-forge/package.json")} ] || { say "the bundle has no production dependencies (node_modules): build it with scripts/agent-bundle.sh"; exit 3; }
$S ln -sfn ${shQuote(`releases/${input.bundleHash}/package`)} ${shQuote(p.install + "/current")}
$S rm -f ${shQuote(input.bundlePath)}
if ! $S test -s ${shQuote(p.install + "/etc/tokens")}; then
  token=$("$NODE" -e ${shQuote(tokenScript)})
  printf '%s,pulumi,%s\\n' "$token" ${shQuote(input.node)} | $S sh -c 'umask 077; cat > ${p.install}/etc/tokens'
fi
if ! $S test -s ${shQuote(p.install + "/etc/tls.crt")}; then
  $S "$NODE" -e ${shQuote(certScript)} ${shQuote(release + "/package/node_modules/node-forge")} ${shQuote(names)} ${shQuote(p.install + "/etc/tls.key")} ${shQuote(p.install + "/etc/tls.crt")}
fi
ARGS=${shQuote(args.map(shQuote).join(" "))}
if ${input.root ? "false" : "[ -d /run/systemd/system ] && command -v systemctl >/dev/null"}; then
  printf '%s\\n' '[Unit]' 'Description=pulumi-lvm node agent (${input.node})' 'After=network-online.target' '' '[Service]' "ExecStart=$NODE ${main} $ARGS" 'Restart=on-failure' 'TimeoutStopSec=60' '' '[Install]' 'WantedBy=multi-user.target' | $S sh -c 'cat > ${p.unit}'
  $S systemctl daemon-reload
  $S systemctl enable pulumi-lvm-agent.service >/dev/null 2>&1
  $S systemctl restart pulumi-lvm-agent.service
  logs() { $S journalctl -u pulumi-lvm-agent.service -n 30 --no-pager; }
else
  say "no systemd: starting the agent as a detached process under a supervisor that restarts it when it fails, as the unit's Restart=on-failure would (pid file ${p.install}/agent.pid, log ${p.log}; not started again after a reboot)"
  stop_pid ${shQuote(p.install + "/agent.pid")}
  $S mkdir -p "$(dirname ${p.log})"
  logs() { $S tail -n 30 ${p.log}; }
  printf '%s\\n' '#!/bin/sh' '# pulumi-lvm node agent supervisor (${input.node}), written by AgentHost on a host without systemd.' 'while :; do' "  $NODE ${main} $ARGS" '  code=$?' '  [ "$code" -eq 0 ] && exit 0' '  echo "pulumi-lvm-agent supervisor: the agent exited $code; starting it again in 2 s" >&2' '  sleep 2' 'done' | $S sh -c 'cat > ${p.install}/supervise.sh'
  $S sh -c "nohup setsid sh ${p.install}/supervise.sh >> ${p.log} 2>&1 < /dev/null & echo \\$! > ${p.install}/agent.pid"
fi
if ! $S "$NODE" -e ${shQuote(readyScript)} ${input.port} ${shQuote(p.install + "/etc/tls.crt")}; then
  say "the agent did not get ready on port ${input.port}; its log:"
  logs >&2 || true
  exit 4
fi
$S "$NODE" -e ${shQuote(outputScript)} ${shQuote(url)} ${shQuote(p.install + "/etc/tokens")} ${shQuote(p.install + "/etc/tls.crt")}
`;
}

/**
 * Removes this release. When it is still the current one (a destroy, not the old half of an
 * upgrade): stops the agent, removes the unit, the install directory (token, certificate, releases).
 * Never touches volume groups or disks; the journal in the state directory is kept.
 */
export function removeScript(input: AgentHostScriptInput): string {
  const p = pathsOf(input);
  const release = `${p.install}/releases/${input.bundleHash}`;
  return `set -eu
S=${input.sudo ? '"sudo -n"' : '""'}
${STOP_PID}current=$($S readlink ${shQuote(p.install + "/current")} 2>/dev/null || true)
if [ -n "$current" ] && [ "$current" != ${shQuote(`releases/${input.bundleHash}/package`)} ]; then
  $S rm -rf ${shQuote(release)}
  exit 0
fi
if [ -f ${p.unit} ]; then
  $S systemctl disable --now pulumi-lvm-agent.service >/dev/null 2>&1 || true
  $S rm -f ${p.unit}
  $S systemctl daemon-reload || true
fi
stop_pid ${shQuote(p.install + "/agent.pid")}
$S rm -rf ${shQuote(p.install)}
`;
}

/**
 * Prints the host's inventory (`pulumi-lvm inventory` of the installed release: lsblk, wipefs
 * --no-act, blkid -p, lvm's reports, sysfs; reading only) for the agent's node and devices, with
 * what the agent plans with besides the disks (--agent-state-dir), on stdout, nothing else. Never
 * runs a command that writes: the disks change only through a plan applied by the agent.
 */
export function inventoryScript(input: AgentHostScriptInput): string {
  const p = pathsOf(input);
  const main = `${p.install}/current/dist/src/cli/main.js`;
  const args = [
    "inventory",
    "--node",
    input.node,
    ...(input.devices ?? []).flatMap((d) => ["--device", d]),
    "--agent-state-dir",
    p.state,
    "-q",
  ];
  return `set -eu
say() { echo "pulumi-lvm HostInventory ${input.node}: $*" >&2; }
S=${input.sudo ? '"sudo -n"' : '""'}
NODE=$(command -v node || true)
[ -n "$NODE" ] || { say "no node (Node.js >= ${input.nodeMajor}) on this host (PATH=$PATH)"; exit 3; }
[ -f ${shQuote(main)} ] || { say "pulumi-lvm is not installed at ${p.install}/current (its AgentHost installs it first)"; exit 3; }
$S "$NODE" ${shQuote(main)} ${args.map(shQuote).join(" ")}
`;
}
