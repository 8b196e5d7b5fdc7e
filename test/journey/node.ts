/**
 * The journey's node as its own tools see it (lvm, sysfs, wipefs in the guest), never through our
 * code: what every step checks.
 */
import type { Cluster } from "../cluster/cluster";
import { LVM_ENV } from "../cluster/workloads";

/** The guest's own lvm report (`pvs`/`vgs`/`lvs -a`) as rows of fields; `extra`, e.g. `--units b`. */
export async function lvmReport(
  cluster: Cluster,
  cmd: "pvs" | "vgs" | "lvs",
  fields: string,
  extra: readonly string[] = [],
): Promise<string[][]> {
  // `-a` for lvs only (a thin pool's hidden _tdata/_tmeta volumes); `pvs -a` would also list every
  // block device that is not a physical volume, with an empty VG.
  const all = cmd === "lvs" ? ["-a"] : [];
  const out = await cluster.guest.run(
    [cmd, "--noheadings", "--separator", "|", ...all, ...extra, "-o", fields],
    {
      env: LVM_ENV,
    },
  );
  return out
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => l.split("|").map((f) => f.trim()));
}

/** The node's disks by serial, read from sysfs in the guest: serial → /dev/vdX. */
export async function disksBySerial(cluster: Cluster): Promise<Record<string, string>> {
  const out = await cluster.guest.run([
    "sh",
    "-c",
    'for d in /sys/block/vd*; do echo "$(cat $d/serial 2>/dev/null) /dev/${d##*/}"; done',
  ]);
  return Object.fromEntries(
    out
      .split("\n")
      .map((l) => l.trim().split(" "))
      .filter((p) => p.length === 2 && p[0]),
  );
}

/** The node's own view of its volume groups and logical volumes (lvm in the guest, not our code). */
export async function nodeLvm(cluster: Cluster): Promise<{ pvs: string; vgs: string; lvs: string }> {
  const run = (argv: string[]) => cluster.guest.run(argv, { env: LVM_ENV });
  return {
    pvs: await run(["pvs", "-o", "pv_name,vg_name,pv_size"]),
    vgs: await run(["vgs", "-o", "vg_name,pv_count,lv_count,vg_size,vg_free"]),
    lvs: await run(["lvs", "-a", "-o", "vg_name,lv_name,lv_attr,lv_size,pool_lv,data_percent"]),
  };
}

/** The signature types on `device` as the node's wipefs reports them (-n: no write); "" when none. */
export async function signatures(cluster: Cluster, device: string): Promise<string> {
  return (await cluster.guest.run(["wipefs", "-i", "-O", "TYPE", device]).catch(() => "")).trim();
}

/** The size in bytes of `vg`/`lv`, from the node's own lvs; NaN when there is none. */
export async function lvBytes(cluster: Cluster, vg: string, lv: string): Promise<number> {
  const rows = await lvmReport(cluster, "lvs", "vg_name,lv_name,lv_size", ["--units", "b", "--nosuffix"]);
  return Number(rows.find(([v, l]) => v === vg && l === lv)?.[2]);
}

/** The tags of the physical volume on `device` (lvm's pv_tags), e.g. ["pulumi-lvm.kname=vdb"]. */
export async function pvTags(cluster: Cluster, device: string): Promise<string[]> {
  const row = (await lvmReport(cluster, "pvs", "pv_name,pv_tags")).find(([pv]) => pv === device);
  return row?.[1] ? row[1].split(",") : [];
}

/**
 * What a stalled step needs from the node itself, never through lvm (a hung lvm would hang this
 * too): the load, processes in uninterruptible sleep or running lvm/lvmd with what they wait on,
 * and device-mapper's devices with their state (a SUSPENDED one blocks every reader).
 */
export async function nodeDiagnostics(cluster: Cluster): Promise<string> {
  const script = [
    "echo '----- node: loadavg'; cat /proc/loadavg",
    "echo '----- node: D-state and lvm processes'; ps -eo pid,ppid,stat,etimes,wchan:28,args | awk 'NR==1 || $3 ~ /D/ || /lvm|vgs|lvs|pvs|vgcreate|lvcreate|dmsetup/' | grep -v awk",
    "echo '----- node: dmsetup info'; dmsetup info -c 2>&1",
    "echo '----- node: lvm locks'; ls -la /run/lock/lvm 2>&1",
  ].join("; ");
  return cluster.guest
    .run(["sh", "-c", script], { timeoutMs: 20_000 })
    .catch((e: Error) => `node diagnostics failed: ${e.message}`);
}
