/**
 * A real OpenSSH server (Debian's openssh-server, the host's /usr/sbin/sshd seen through the guest's
 * 9p root) running inside a qemu guest (test/vm/guest.ts), for the bare-hosts engine test: a fresh
 * host key and a client key made per test, root login by that key only, sftp for CopyToRemote.
 * Reached from the host through a qemu port forward, exactly as Pulumi reaches a bare host.
 *
 *   const key = makeClientKey(dir);                      // ed25519, OpenSSH format
 *   const sshd = await startGuestSshd(guest, { port: 22, authorizedKeys: [key.publicKey] });
 *   // connection: { host: "127.0.0.1", port: guest.hostPort(22), user: "root", privateKey: key.privateKey }
 *
 * Its config lives in the guest's /etc overlay (never on the host). A second listening port may be
 * given an environment without Node.js on PATH (`noNodePort`): a host "without Node" for the error test.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Guest } from "../vm/guest";
import { writeGuestFile } from "../vm/guest-agent";

/** The OpenSSH server binary the guest runs (the host's, through the 9p root). */
export const SSHD = "/usr/sbin/sshd";
const SFTP_SERVER = "/usr/lib/openssh/sftp-server";

/** Throws, naming the Debian package and how to install it, unless sshd and sftp-server are on the host. */
export function requireSshd(): void {
  const missing = [SSHD, SFTP_SERVER, "/usr/bin/ssh-keygen"].filter((f) => !fs.existsSync(f));
  if (missing.length === 0) return;
  throw new Error(
    [
      "",
      "==================================================================================",
      `The bare-hosts engine test needs a real OpenSSH server; missing: ${missing.join(", ")}`,
      "  run:       bash test/setup.sh   (it runs apt-get install -y --no-install-recommends openssh-server)",
      "  (Debian's openssh-server; the qemu guest runs the host's /usr/sbin/sshd through its 9p root)",
      "==================================================================================",
    ].join("\n"),
  );
}

export interface ClientKey {
  readonly privateKey: string;
  readonly publicKey: string;
}

/** A fresh ed25519 key pair (no passphrase), made with ssh-keygen in `dir`. */
export function makeClientKey(dir: string, name = "id_ed25519"): ClientKey {
  const file = path.join(dir, name);
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", `pulumi-lvm-test-${name}`, "-f", file]);
  return {
    privateKey: fs.readFileSync(file, "utf8"),
    publicKey: fs.readFileSync(`${file}.pub`, "utf8").trim(),
  };
}

export interface GuestSshdOptions {
  /** The guest port sshd listens on for root with the authorized keys. */
  readonly port: number;
  /** A name for a second sshd in the same guest (its own config, host key and pid file). @default "pl-sshd" */
  readonly name?: string;
  /** A second guest port whose sessions have PATH without Node.js (a host "without Node"). */
  readonly noNodePort?: number;
  /** OpenSSH public key lines root may log in with. */
  readonly authorizedKeys: readonly string[];
}

export interface GuestSshd {
  readonly pid: number;
  /** Its host key's public line (`ssh-ed25519 AAAA... root@...`): AgentHost's hostKey. */
  readonly hostKey: string;
  readonly logFile: string;
  logTail(lines?: number): Promise<string>;
}

/** The tools a session on the no-Node port finds (what the install script runs before its Node check). */
const NO_NODE_BIN = "/run/pl-sshd/no-node-bin";

export async function startGuestSshd(guest: Guest, o: GuestSshdOptions): Promise<GuestSshd> {
  requireSshd();
  const DIR = `/etc/${o.name ?? "pl-sshd"}`;
  await guest.run(["mkdir", "-p", "-m", "700", DIR]);
  await guest.run(["rm", "-f", `${DIR}/host_ed25519`, `${DIR}/host_ed25519.pub`]);
  await guest.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", `${DIR}/host_ed25519`]);
  await writeGuestFile(guest, `${DIR}/authorized_keys`, `${o.authorizedKeys.join("\n")}\n`, "600");
  // sshd's privilege separation directory; /run is the guest's tmpfs.
  await guest.run(["mkdir", "-p", "-m", "755", "/run/sshd"]);
  const config = [
    `Port ${o.port}`,
    ...(o.noNodePort ? [`Port ${o.noNodePort}`] : []),
    "ListenAddress 0.0.0.0",
    `HostKey ${DIR}/host_ed25519`,
    `PidFile /run/${o.name ?? "pl-sshd"}.pid`,
    "PermitRootLogin prohibit-password",
    "PubkeyAuthentication yes",
    "PasswordAuthentication no",
    "KbdInteractiveAuthentication no",
    `AuthorizedKeysFile ${DIR}/authorized_keys`,
    "UsePAM no",
    "UseDNS no",
    "LogLevel VERBOSE",
    `Subsystem sftp ${SFTP_SERVER}`,
    ...(o.noNodePort ? [`Match LocalPort ${o.noNodePort}`, `  SetEnv PATH=${NO_NODE_BIN}`] : []),
  ];
  await writeGuestFile(guest, `${DIR}/sshd_config`, `${config.join("\n")}\n`, "600");
  if (o.noNodePort) {
    // The shell and the few tools a host without Node.js still has; node is not among them.
    await guest.run(["mkdir", "-p", NO_NODE_BIN]);
    for (const tool of [
      "sh",
      "bash",
      "id",
      "cat",
      "mkdir",
      "rm",
      "tar",
      "true",
      "mktemp",
      "stat",
      "sha256sum",
      "cut",
    ])
      await guest.run(["ln", "-sf", `/usr/bin/${tool}`, `${NO_NODE_BIN}/${tool}`]);
  }
  await guest.run([SSHD, "-t", "-f", `${DIR}/sshd_config`]);
  const { pid, logFile } = await guest.spawn([SSHD, "-D", "-e", "-f", `${DIR}/sshd_config`]);
  const logTail = async (lines = 40) => {
    const r = await guest.exec(["tail", "-n", String(lines), logFile]);
    return r.code === 0 ? r.stdout : `(cannot read ${logFile}: ${r.stderr.trim()})`;
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    const r = await guest.exec(["sh", "-c", `grep -q 'Server listening' ${logFile}`]);
    if (r.code === 0) break;
    const gone = (await guest.processes()).find(
      (p) => p.pid === pid && (p.exitCode !== null || p.signal !== null),
    );
    if (gone)
      throw new Error(`sshd in the guest exited (${gone.exitCode ?? gone.signal}):\n${await logTail()}`);
    if (Date.now() > deadline)
      throw new Error(`sshd in the guest did not listen within 60 s:\n${await logTail()}`);
    await new Promise((res) => setTimeout(res, 500));
  }
  const hostKey = (await guest.run(["cat", `${DIR}/host_ed25519.pub`])).trim();
  return { pid, hostKey, logFile, logTail };
}
