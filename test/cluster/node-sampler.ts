/**
 * What the emulated node spends its two CPUs on, sampled from inside the guest while a tier runs:
 * `PULUMI_LVM_NODE_SAMPLE=<file>` appends, every `PULUMI_LVM_NODE_SAMPLE_S` seconds (default 60),
 * the load, CPU, memory and I/O pressure (when the kernel has PSI on), `free`, `vmstat` and the
 * busiest processes. A diagnostic for a slow run (docs/testing-cluster.md), off by default: each
 * sample costs the node a shell, `vmstat` and `top`.
 */
import * as fs from "node:fs";
import type { Guest } from "../vm/guest";

const SCRIPT = [
  'echo "===== $(date -u +%T) loadavg $(cat /proc/loadavg)"',
  'for f in cpu memory io; do [ -r /proc/pressure/$f ] && echo "psi $f: $(tr "\\n" " " < /proc/pressure/$f)"; done',
  "free -m | sed -n 2,3p",
  "vmstat 5 2 | sed -n '1,2p;4p'",
  "top -bn1 -o %CPU -w 220 | sed -n '3p;7,24p'",
].join("; ");

/** Starts sampling `guest` when PULUMI_LVM_NODE_SAMPLE names a file; returns the stop function. */
export function sampleNode(guest: Guest): () => void {
  const file = process.env.PULUMI_LVM_NODE_SAMPLE;
  if (!file) return () => undefined;
  const every = Number(process.env.PULUMI_LVM_NODE_SAMPLE_S ?? 60) * 1000;
  const tick = () => {
    void guest
      .run(["sh", "-c", SCRIPT], { timeoutMs: 60_000 })
      .then((out) => fs.appendFileSync(file, `${out}\n`))
      .catch((e: Error) => fs.appendFileSync(file, `sample failed: ${e.message}\n`));
  };
  tick();
  const timer = setInterval(tick, every);
  timer.unref();
  return () => clearInterval(timer);
}
