import * as crypto from "node:crypto";
import { CERTIFICATE_SCRIPT } from "./agent-host-certificate";

/**
 * The shell scripts AgentHost runs on a bare host over SSH (pure: text in, text out). They install,
 * start and remove the pulumi-lvm node agent and nothing else: no lvm command runs here, the disks
 * are only ever changed by the agent applying a plan the user previewed.
 */

/** What the scripts need to know; every value is shell-quoted where it is used. */
export interface AgentHostScriptInput {
  /** The node name the agent serves (its --node, the token's scope). */
  readonly node: string;
  /** sha256 of the bundle: the release directory's name, checked before the bundle is unpacked. */
  readonly bundleHash: string;
  /**
   * What the token and the serving certificate were made for (hex, from AgentHost's
   * credentialsRevision): an install for another value makes new ones; a delete for another value
   * leaves the host to the install that holds it.
   */
  readonly credentialsId: string;
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

/** The bundle's file name in the directory prepareScript made: the copy's remotePath is `<dir>/bundle.tgz`. */
export const BUNDLE_FILE = "bundle.tgz";

/** credentialsId for a credentials revision ("" when none was given): hex, safe in any script. */
export function credentialsIdOf(revision: string): string {
  return crypto
    .createHash("sha256")
    .update(`pulumi-lvm agent credentials\n${revision}`)
    .digest("hex")
    .slice(0, 32);
}

/**
 * Makes the directory the bundle is copied into, as the SSH user, new for each install: `mktemp -d`
 * picks a random name and makes it only where nothing is (never through a symlink), mode 0700, so
 * no other local user can put, swap or read anything in it, nor guess its name beforehand. Prints
 * its path, nothing else. The install script removes it once the release is in place.
 */
export function prepareScript(): string {
  return `set -eu
d=$(mktemp -d "\${TMPDIR:-/tmp}/pulumi-lvm-agent.XXXXXXXXXX")
printf '%s\\n' "$d"
`;
}

/**
 * Refuses a node binary root would run (by sudo, in the unit) that a user other than root and the
 * SSH user could replace: the directory PATH found it in, the file (symlinks resolved) or its
 * directory theirs, or writable by group or others (a node found on a PATH through /tmp, say).
 */
const NODE_OWNER_CHECK = `for f in "$(dirname "$NODE")" "$(readlink -f "$NODE")" "$(dirname "$(readlink -f "$NODE")")"; do
  set -- $(stat -c '%u %a %U' "$f")
  { [ "$1" = 0 ] || [ "$1" = "$(id -u)" ]; } && [ $((0$2 & 022)) -eq 0 ] || { say "node at $NODE: $f belongs to $3 with mode $2, so another user could replace what root runs: refusing it (install Node.js where only root can write)"; exit 3; }
done
`;

/** Shell functions on the directory prepareScript made (mode 0700, the SSH user's own, not a symlink). */
const INCOMING_FUNCTIONS = `own_dir() { [ -d "$1" ] && [ ! -L "$1" ] && [ "$(stat -c '%u %a' "$1")" = "$(id -u) 700" ]; }
drop_incoming() { if own_dir "$1"; then rm -rf -- "$1"; fi; }
`;

/**
 * Unpacks the copied bundle as the release, unless that release is in place already. Refuses a
 * directory that is not the SSH user's own 0700 one and a bundle that is not a regular file of the
 * SSH user; reads it as the SSH user into a directory only root can write, checks that copy with
 * `sha256sum -c` against the planned hash and unpacks only that copy (so nothing anyone does to
 * the copied file after the check matters), without the archive's owners and modes, and renames the
 * result into place (a release is complete or absent). Then removes the copied directory.
 */
function unpackSection(input: AgentHostScriptInput, incoming: string): string {
  const p = pathsOf(input);
  const release = `${p.install}/releases/${input.bundleHash}`;
  const bundle = `${incoming}/${BUNDLE_FILE}`;
  return `${INCOMING_FUNCTIONS}if ! $S test -f ${shQuote(release + "/package/package.json")}; then
  own_dir ${shQuote(incoming)} || { say "${incoming} is not a directory only $(id -un) can write (owner and mode: $(stat -c '%U %a' ${shQuote(incoming)} 2>/dev/null || echo none)): refusing the bundle in it"; exit 3; }
  [ -f ${shQuote(bundle)} ] && [ ! -L ${shQuote(bundle)} ] || { say "the copied bundle ${bundle} is missing or not a regular file (the copy is made by the AgentHost's bundle resource: pulumi up --replace it)"; exit 3; }
  [ "$(stat -c %u ${shQuote(bundle)})" = "$(id -u)" ] || { say "the copied bundle ${bundle} belongs to $(stat -c %U ${shQuote(bundle)}), not $(id -un): refusing it"; exit 3; }
  stage=$($S mktemp -d ${shQuote(p.install + "/.incoming.XXXXXXXXXX")})
  trap '$S rm -rf "$stage"' EXIT
  cat -- ${shQuote(bundle)} | $S sh -c 'umask 077; cat > "$1"' sh "$stage/${BUNDLE_FILE}"
  if ! printf '%s  %s\\n' ${input.bundleHash} "$stage/${BUNDLE_FILE}" | $S sha256sum -c - >/dev/null 2>&1; then
    say "the copied bundle's sha256 is $($S sha256sum "$stage/${BUNDLE_FILE}" | cut -d ' ' -f 1), not the planned ${input.bundleHash}: refusing it"
    exit 3
  fi
  $S mkdir "$stage/release"
  $S tar -xzf "$stage/${BUNDLE_FILE}" -C "$stage/release" --no-same-owner --no-same-permissions
  $S rm -rf ${shQuote(release)}
  $S mv "$stage/release" ${shQuote(release)}
fi
drop_incoming ${shQuote(incoming)}
`;
}

function scriptHead(input: AgentHostScriptInput): string {
  return `set -eu
umask 022
say() { echo "pulumi-lvm AgentHost ${input.node}: $*" >&2; }
S=${input.sudo ? '"sudo -n"' : '""'}
`;
}

/** The install directories, checked; then the release from the copied bundle (unpackSection). */
function releaseSection(input: AgentHostScriptInput, incoming: string): string {
  const p = pathsOf(input);
  return `command -v sha256sum >/dev/null || { say "no sha256sum on this host (coreutils): the bundle cannot be checked"; exit 3; }
$S mkdir -p ${shQuote(p.install + "/releases")} ${shQuote(p.install + "/etc")} ${shQuote(p.state)}
$S chmod 700 ${shQuote(p.install + "/etc")}
${ownedDirsSection([p.install, p.install + "/releases", p.install + "/etc", p.state])}${unpackSection(input, incoming)}`;
}

/**
 * The install script's first part alone: the install directories checked and the release put in
 * place from the copied bundle, nothing started (installScript runs the same text, then the rest).
 */
export function releaseScript(input: AgentHostScriptInput, incoming: string): string {
  return `${scriptHead(input)}${releaseSection(input, incoming)}`;
}

/**
 * Refuses to install into a directory another user made or can write (a pre-created
 * /opt/pulumi-lvm, say): each must be the installing user's (root's) own and writable by no one else.
 */
function ownedDirsSection(dirs: readonly string[]): string {
  return `ME=$($S id -u)
for d in ${dirs.map(shQuote).join(" ")}; do
  set -- $($S stat -c '%u %a %U' "$d")
  [ "$1" = "$ME" ] && [ $((0$2 & 022)) -eq 0 ] || { say "$d belongs to $3 with mode $2 (a symlink or a directory another user made or can write): refusing to install into it"; exit 3; }
done
`;
}

/**
 * Installs the bundle as a release (by hash), makes it current, creates the token and the serving
 * certificate (kept across upgrades; new ones when the credentials revision changed, the
 * certificate also when it nears its end: agent-host-certificate.ts), writes and (re)starts the
 * systemd unit (or, without systemd, a detached supervisor shell that starts the agent again when it
 * fails, as the unit's Restart=on-failure, its process group in a pid file), waits for /readyz and
 * prints `{"url","token","caCertificate"}` on stdout, nothing else. Fails with a message naming the
 * node. `incoming` is the directory prepareScript made, holding the copied bundle.
 */
export function installScript(input: AgentHostScriptInput, url: string, incoming: string): string {
  const p = pathsOf(input);
  const release = `${p.install}/releases/${input.bundleHash}`;
  const names = JSON.stringify([input.node, ...input.certificateNames, "localhost", "127.0.0.1"]);
  const revisionFile = `${p.install}/etc/credentials-revision`;
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
  return `${scriptHead(input)}${STOP_PID}NODE=$(command -v node || true)
[ -n "$NODE" ] || { say "no node (Node.js >= ${input.nodeMajor}) on this host (PATH=$PATH); install Node.js ${input.nodeMajor}+ first"; exit 3; }
major=$("$NODE" -p 'process.versions.node.split(".")[0]')
[ "$major" -ge ${input.nodeMajor} ] || { say "node $("$NODE" --version) at $NODE is too old: the agent needs Node.js >= ${input.nodeMajor}"; exit 3; }
${NODE_OWNER_CHECK}[ -z "$S" ] || $S true 2>/dev/null || { say "sudo -n does not work for $(id -un) (passwordless sudo is needed)"; exit 3; }
${releaseSection(input, incoming)}[ -f ${shQuote(release + "/package/node_modules/node-forge/package.json")} ] || { say "the bundle has no production dependencies (node_modules): build it with scripts/agent-bundle.sh"; exit 3; }
$S ln -sfn ${shQuote(`releases/${input.bundleHash}/package`)} ${shQuote(p.install + "/current")}
rotate=""
[ "$($S cat ${shQuote(revisionFile)} 2>/dev/null || echo ${credentialsIdOf("")})" = ${input.credentialsId} ] || rotate=rotate
if [ -n "$rotate" ] || ! $S test -s ${shQuote(p.install + "/etc/tokens")}; then
  token=$("$NODE" -e ${shQuote(tokenScript)})
  printf '%s,pulumi,%s\\n' "$token" ${shQuote(input.node)} | $S sh -c 'umask 077; cat > ${p.install}/etc/tokens'
  [ -z "$rotate" ] || say "the credentials revision changed: a new token and serving certificate"
fi
$S "$NODE" -e ${shQuote(CERTIFICATE_SCRIPT)} ${shQuote(release + "/package/node_modules/node-forge")} ${shQuote(names)} ${shQuote(p.install + "/etc/tls.key")} ${shQuote(p.install + "/etc/tls.crt")} $rotate
echo ${input.credentialsId} | $S sh -c 'cat > ${revisionFile}'
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
 * Removes this install. When its release is not the current one (the old half of an upgrade): only
 * that release. When a later install with another credentials revision holds the host (the old
 * half of a rotation): nothing. Otherwise (a destroy): stops the agent, removes the unit and the
 * install directory (token, certificate, releases). Always removes the install's copied-bundle
 * directory if it is still there (a failed install). Never touches volume groups or disks; the
 * journal in the state directory is kept.
 */
export function removeScript(input: AgentHostScriptInput, incoming?: string): string {
  const p = pathsOf(input);
  const release = `${p.install}/releases/${input.bundleHash}`;
  return `set -eu
S=${input.sudo ? '"sudo -n"' : '""'}
${STOP_PID}${INCOMING_FUNCTIONS}${incoming ? `drop_incoming ${shQuote(incoming)}\n` : ""}current=$($S readlink ${shQuote(p.install + "/current")} 2>/dev/null || true)
if [ -n "$current" ] && [ "$current" != ${shQuote(`releases/${input.bundleHash}/package`)} ]; then
  $S rm -rf ${shQuote(release)}
  exit 0
fi
if [ -n "$current" ] && [ "$($S cat ${shQuote(p.install + "/etc/credentials-revision")} 2>/dev/null || echo ${credentialsIdOf("")})" != ${input.credentialsId} ]; then
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
${NODE_OWNER_CHECK}[ -f ${shQuote(main)} ] || { say "pulumi-lvm is not installed at ${p.install}/current (its AgentHost installs it first)"; exit 3; }
$S "$NODE" ${shQuote(main)} ${args.map(shQuote).join(" ")}
`;
}
