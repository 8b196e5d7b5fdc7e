import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { parseIncomingDir } from "../../src/components/agent-host";
import { BUNDLE_FILE, prepareScript } from "../../src/components/agent-host-script";

/**
 * AgentHost's first two steps as they happen on the host, run here (as this process's user, root in
 * CI, as the SSH user would be): the prepare command's script, with `TMPDIR` for /tmp, and the copy
 * as the Command provider's sftp makes it (sftp-server opens `<dir>/bundle.tgz` with
 * O_CREAT|O_TRUNC|O_WRONLY and writes). The install script runs after them, as in AgentHost.
 */
export function prepareLocally(tmpdir: string): string {
  const r = spawnSync("sh", ["-c", prepareScript()], {
    encoding: "utf8",
    env: { ...process.env, TMPDIR: tmpdir },
  });
  if (r.status !== 0) throw new Error(`the prepare script exited ${r.status}: ${r.stderr}`);
  return parseIncomingDir("local", r.stdout);
}

/** The copy: the bundle's bytes into `<dir>/bundle.tgz`. */
export function copyLocally(dir: string, bundle: string | Buffer): void {
  fs.writeFileSync(`${dir}/${BUNDLE_FILE}`, typeof bundle === "string" ? fs.readFileSync(bundle) : bundle);
}
