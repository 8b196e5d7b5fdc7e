/**
 * A kubernetes.io/tls Secret volume as the kubelet writes it (its AtomicWriter): the files live in a
 * timestamped directory, `..data` links to it, and tls.crt / tls.key link through `..data`. An
 * update writes a new timestamped directory and renames a fresh `..data_tmp` link over `..data`, so
 * a reader sees the old pair or the new pair, never a mix.
 */
import * as fs from "node:fs";
import * as tls from "node:tls";
import * as path from "node:path";

export class SecretVolume {
  private generation = 0;
  constructor(readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true });
  }

  get certFile(): string {
    return path.join(this.dir, "tls.crt");
  }
  get keyFile(): string {
    return path.join(this.dir, "tls.key");
  }

  /** Writes the pair as the kubelet does: a new timestamped directory, then one atomic link swap. */
  write(files: { cert: string | Buffer; key: string | Buffer }): void {
    const stamp = `..2026_12_06_00_00_${String(this.generation++).padStart(2, "0")}.${process.pid}`;
    const data = path.join(this.dir, stamp);
    fs.mkdirSync(data);
    fs.writeFileSync(path.join(data, "tls.crt"), files.cert);
    fs.writeFileSync(path.join(data, "tls.key"), files.key, { mode: 0o600 });
    const previous = fs.existsSync(path.join(this.dir, "..data"))
      ? fs.readlinkSync(path.join(this.dir, "..data"))
      : undefined;
    fs.symlinkSync(stamp, path.join(this.dir, "..data_tmp"));
    fs.renameSync(path.join(this.dir, "..data_tmp"), path.join(this.dir, "..data"));
    for (const name of ["tls.crt", "tls.key"])
      if (!fs.existsSync(path.join(this.dir, name)))
        fs.symlinkSync(path.join("..data", name), path.join(this.dir, name));
    if (previous) fs.rmSync(path.join(this.dir, previous), { recursive: true });
  }
}

/** The SHA-256 fingerprint of the certificate a new TLS connection to host:port is served. */
export function servedFingerprint(port: number, host = "127.0.0.1", servername?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host,
      port,
      rejectUnauthorized: false,
      ...(servername ? { servername } : {}),
    });
    socket.once("secureConnect", () => {
      const fp = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fp);
    });
    socket.once("error", reject);
  });
}

/** Polls `servedFingerprint` until it is `want` or `ms` passed; returns the last one seen. */
export async function waitForServed(
  port: number,
  want: string,
  ms: number,
  servername?: string,
): Promise<string> {
  const deadline = Date.now() + ms;
  let seen = await servedFingerprint(port, "127.0.0.1", servername);
  while (seen !== want && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    seen = await servedFingerprint(port, "127.0.0.1", servername);
  }
  return seen;
}
