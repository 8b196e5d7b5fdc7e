/**
 * What users put on the storage, for the cluster tier and the journey: PersistentVolumeClaims and
 * short-lived pods that mount them (from the tools image, never pulled), and the node's own lvm
 * report. One place for both callers, so a fix to how a pod is waited for lands in both.
 */
import type { Json } from "../env/cluster";
import type { Cluster } from "./cluster";
import { TOOLS_IMAGE } from "./images";
import { apply, eventsOf, get, remove, waitFor, waitPodPhase } from "./objects";

/** A ReadWriteOnce PVC object; `dataSource` restores a snapshot. */
export function claimObject(
  namespace: string,
  name: string,
  storageClass: string,
  size: string,
  dataSource?: Json,
): Json {
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name, namespace },
    spec: {
      accessModes: ["ReadWriteOnce"],
      storageClassName: storageClass,
      resources: { requests: { storage: size } },
      ...(dataSource ? { dataSource } : {}),
    },
  };
}

export interface RunOptions {
  /**
   * @default 600_000: pod start, volume provisioning and mkfs on a TCG node. 300 s ran out in CI
   * (2026-11-28, load 4–5) for the first PVC after TopoLVM's install: the scheduler refused it for 2.4
   * minutes ("did not have enough free storage": csi-provisioner, restarted 3 times, had not yet
   * published the node's capacity), and the pod had succeeded when it was looked at later.
   */
  readonly timeoutMs?: number;
  /** Delete the pod after it succeeded, so its claims can be used again. @default true */
  readonly removeAfter?: boolean;
}

/**
 * Runs `script` (sh, `set -e`) in a pod with each claim mounted at /<key>; resolves with the pod's
 * log once it succeeded; throws with the log and the pod's events if it failed.
 */
export async function runWithClaims(
  cluster: Cluster,
  namespace: string,
  name: string,
  claims: Readonly<Record<string, string>>,
  script: string,
  o: RunOptions = {},
): Promise<string> {
  const mounts = Object.entries(claims);
  await apply(cluster.cp, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace },
    spec: {
      restartPolicy: "Never",
      containers: [
        {
          name: "main",
          image: TOOLS_IMAGE,
          imagePullPolicy: "Never",
          command: ["/bin/sh", "-c", `set -e; ${script}`],
          volumeMounts: mounts.map(([dir], i) => ({ name: `v${i}`, mountPath: `/${dir}` })),
        },
      ],
      volumes: mounts.map(([, claimName], i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName } })),
    },
  });
  const pod = await waitPodPhase(
    cluster.cp,
    namespace,
    name,
    ["Succeeded", "Failed"],
    o.timeoutMs ?? 600_000,
  );
  const log = await cluster.podLogs(namespace, name);
  if (pod.status.phase !== "Succeeded") {
    const events = (await eventsOf(cluster.cp, namespace, name)).join("\n");
    throw new Error(`pod ${namespace}/${name} ${pod.status.phase}: ${log}\n${events}`);
  }
  if (o.removeAfter ?? true) await remove(cluster.cp, `/api/v1/namespaces/${namespace}/pods/${name}`);
  return log;
}

/** The PV a claim is bound to, once it is Bound (its events in the error otherwise). */
export async function boundVolume(
  cluster: Cluster,
  namespace: string,
  claim: string,
  timeoutMs = 300_000,
): Promise<{ pvc: Json; pv: Json }> {
  const pvc = await waitFor(
    `PVC ${namespace}/${claim} Bound`,
    () => get(cluster.cp, `/api/v1/namespaces/${namespace}/persistentvolumeclaims/${claim}`),
    (p) => p?.status?.phase === "Bound",
    timeoutMs,
    async () => (await eventsOf(cluster.cp, namespace, claim)).join("\n"),
  );
  const pv = await get(cluster.cp, `/api/v1/persistentvolumes/${pvc.spec.volumeName}`);
  if (!pv) throw new Error(`PVC ${namespace}/${claim} is bound to ${pvc.spec.volumeName}, which is gone`);
  return { pvc, pv };
}

/** The sha256 that `sha256sum <path>` printed in a log. */
export function checksumIn(log: string, path: string): string | undefined {
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`^([0-9a-f]{64})\\s+${escaped}$`, "m").exec(log)?.[1];
}

/** The environment every lvm command run in the guest gets: C locale, no fd-leak warnings on stderr. */
export const LVM_ENV = { LC_ALL: "C", LVM_SUPPRESS_FD_WARNINGS: "1" };

/** The guest's own `lvs` (not our code): one row per visible LV, sizes in bytes. */
export async function guestLvs(cluster: Cluster): Promise<Json[]> {
  const out = await cluster.guest.run(
    [
      "lvs",
      "--reportformat",
      "json",
      "--units",
      "b",
      "--nosuffix",
      "-o",
      "lv_name,vg_name,pool_lv,lv_size,lv_attr,data_percent",
    ],
    { env: LVM_ENV },
  );
  return JSON.parse(out).report[0].lv;
}
