/**
 * The agent's own copies of the host's lvm configuration, written into its state directory at every
 * start (the host's configuration may have changed since): --lvm-sync-io's, and the lvm shell's.
 */
import * as path from "node:path";
import type { AgentConfig } from "./config";
import { createLvmRunner } from "./lvm-runner";
import { LVM_SHELL_SETTINGS } from "./lvm-shell-protocol";
import { writeSyncIoSystemDir } from "./lvm-system-dir";

/** The directory --lvm-sync-io writes at every start (the host's lvm configuration may have changed). */
export const SYNC_IO_DIR_NAME = "lvm-sync-io";

/**
 * --lvm-sync-io: a copy of the lvm configuration (--lvm-system-dir, else /etc/lvm) with use_aio = 0
 * in <state-dir>/lvm-sync-io, rewritten at each start; the agent does not start if it cannot be written
 * or lvm, run as the agent runs it (through --command-prefix), does not read it as written. With a
 * prefix both paths are the host's, reached under --host-root.
 */
export async function syncIoSystemDir(config: AgentConfig): Promise<string> {
  try {
    return await writeLvmConfigCopy(config, SYNC_IO_DIR_NAME);
  } catch (e) {
    throw new Error(`--lvm-sync-io: ${(e as Error).message}`);
  }
}

/** The lvm shell's own copy of the configuration: the synchronous-I/O copy's settings and its own. */
export const SHELL_DIR_NAME = "lvm-shell";

/**
 * The lvm shell's configuration (<state-dir>/lvm-shell: the host's, with use_aio = 0 and the command
 * log on LVM_REPORT_FD, checked as --lvm-sync-io's copy is), or undefined when it cannot be written or
 * lvm does not read it as written: then every command runs one-shot, the log says why and /metrics
 * shows the shell unavailable. A copy of its own: in one-shot commands these settings would add the
 * command log to every report's output.
 */
export async function lvmShellSystemDir(
  config: AgentConfig,
  log: (entry: Record<string, unknown>) => void,
): Promise<string | undefined> {
  try {
    return await writeLvmConfigCopy(config, SHELL_DIR_NAME, LVM_SHELL_SETTINGS);
  } catch (e) {
    log({
      msg: "no lvm shell: every lvm command runs as a process of its own",
      reason: (e as Error).message,
    });
    return undefined;
  }
}

/**
 * Writes <state-dir>/<name>: the lvm configuration (--lvm-system-dir, else /etc/lvm) with use_aio = 0
 * and `extraSettings`, checked by running lvm as the agent runs it with the host's directory and with
 * the copy (writeSyncIoSystemDir); returns its path, or throws naming both directories and why.
 */
async function writeLvmConfigCopy(
  config: AgentConfig,
  name: string,
  extraSettings?: ReadonlyMap<string, string>,
): Promise<string> {
  const to = path.join(config.stateDir, name);
  const from = config.lvmSystemDir ?? "/etc/lvm";
  const runner = (lvmSystemDir: string | undefined) =>
    createLvmRunner({
      commandPrefix: config.commandPrefix,
      timeoutMs: config.commandTimeoutMs,
      ...(lvmSystemDir ? { lvmSystemDir } : {}),
    });
  try {
    await writeSyncIoSystemDir({
      from,
      to,
      run: runner(config.lvmSystemDir),
      runWithCopy: runner(to),
      ...(extraSettings ? { extraSettings } : {}),
      ...(config.hostRoot ? { hostRoot: config.hostRoot } : {}),
    });
  } catch (e) {
    throw new Error(`cannot write ${to} from the lvm configuration in ${from}: ${(e as Error).message}`);
  }
  return to;
}
