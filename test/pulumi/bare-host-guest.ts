/**
 * The qemu guest (test/vm/guest.ts) as a bare host for AgentHost: what a real host has and the
 * guest lacks (a writable /opt), and what the test reads on it with the guest's own tools (lvm's
 * reports, the agent's processes), never through the agent.
 */
import type { Guest } from "../vm/guest";

/**
 * The guest's root is the host's, read-only, with writable overlays only on /etc, /var, /root and
 * /tmp (test/vm/guest-init.sh). A bare host's /opt is writable, and AgentHost installs there: give
 * the guest an overlay on /opt too, its upper directory on the guest's system disk (ext4).
 */
export async function writableOpt(g: Guest): Promise<void> {
  const upper = "/var/lib/pl-vm/system-disk/overlay/opt";
  await g.run(["mkdir", "-p", `${upper}/upper`, `${upper}/work`]);
  await g.run([
    "mount",
    "-t",
    "overlay",
    "overlay",
    "-o",
    `lowerdir=/opt,upperdir=${upper}/upper,workdir=${upper}/work`,
    "/opt",
  ]);
}

interface LvmReport {
  report: Array<{ vg?: Array<Record<string, string>>; lv?: Array<Record<string, string>> }>;
}

/** The guest's own `vgs` of one volume group (empty when it does not exist). */
export async function vgs(g: Guest, vg: string): Promise<Array<Record<string, string>>> {
  const r = await g.exec(["vgs", "--reportformat", "json", "-o", "vg_name,pv_count,vg_tags", vg]);
  if (r.code !== 0) return [];
  return (JSON.parse(r.stdout) as LvmReport).report[0]!.vg ?? [];
}

/** The guest's own `lvs` of one volume group. */
export async function lvs(g: Guest, vg: string): Promise<Array<Record<string, string>>> {
  const out = await g.run(["lvs", "--reportformat", "json", "-o", "lv_name,lv_attr,segtype", vg], {
    timeoutMs: 120_000,
  });
  return (JSON.parse(out) as LvmReport).report[0]!.lv ?? [];
}

/** The agent's supervisor and the agent, as `ps` shows them in the guest: "<pgid> <args>". */
export async function agentProcesses(g: Guest): Promise<string[]> {
  const out = await g.run(["ps", "-eo", "pgid=,args="], { timeoutMs: 120_000 });
  return out
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => /supervise\.sh|cli\/main\.js agent/.test(l));
}
