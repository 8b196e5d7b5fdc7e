/**
 * The user's journey (issue 16), end to end with the real engine: examples/quickstart on a local
 * cluster (test/journey/journey.ts: the cluster tier's node with three disks, two of them matching
 * the quickstart's serials), `pulumi preview`, `pulumi up`, then a StatefulSet whose PVC binds on
 * the thin pool. Every step is checked with the cluster's API and the node's own lvm tools, never
 * through our code.
 *
 *   npm run test:journey
 *
 * Named *.journey.ts, not *.test.ts: jest.config.js's integration project takes every *.test.ts
 * under test/, and this tier is not in `npm test` (jest.journey.config.js).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { DEFAULT_IMAGE } from "../../src/version";
import type { Cluster } from "../cluster/cluster";
import { TOOLS_IMAGE } from "../cluster/images";
import { apply, eventsOf, get, waitFor } from "../cluster/objects";
import type { Json } from "../env/cluster";
import type { PulumiWorkspace } from "../pulumi/cli";
import {
  journeyImages,
  NAMESPACE,
  podSummary,
  quickstartStack,
  QUICKSTART_DISKS,
  requireJourneyBinaries,
  SELECTED_SERIALS,
  startJourneyCluster,
  STORAGE_CLASS,
} from "./journey";

jest.setTimeout(1_800_000);

const LVM_ENV = { LC_ALL: "C", LVM_SUPPRESS_FD_WARNINGS: "1" };
const LONG = { timeoutMs: 1_800_000 };
let cluster: Cluster | undefined;
let ws: PulumiWorkspace | undefined;
let scratch: string | undefined;
const timings: Record<string, number> = {};

async function timed<T>(name: string, f: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  try {
    return await f();
  } finally {
    timings[name] = (Date.now() - t0) / 1000;
  }
}

function c(): Cluster {
  if (!cluster) throw new Error("the cluster did not start (see the beforeAll error)");
  return cluster;
}

async function pulumi(args: string[]): Promise<string> {
  const r = await ws!.runAsync(args, LONG);
  if (r.code !== 0)
    throw new Error(
      `pulumi ${args.join(" ")} exited ${r.code}:\n${r.output}\n----- pods -----\n${await podSummary(c())}`,
    );
  return r.output;
}

/** The guest's own lvm report as rows of fields. */
async function lvmReport(cmd: "pvs" | "vgs" | "lvs", fields: string): Promise<string[][]> {
  const out = await c().guest.run([cmd, "--noheadings", "--separator", "|", "-a", "-o", fields], {
    env: LVM_ENV,
  });
  return out
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => l.split("|").map((f) => f.trim()));
}

/** The node's disks by serial, read from sysfs in the guest: serial → /dev/vdX. */
async function disksBySerial(): Promise<Record<string, string>> {
  const out = await c().guest.run([
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

const conditionTrue = (o: Json | undefined, type: string) =>
  !!o?.status?.conditions?.some((x: Json) => x.type === type && x.status === "True");

beforeAll(async () => {
  const bins = requireJourneyBinaries();
  const images = await timed("images", () => journeyImages(bins.cluster, () => undefined));
  cluster = await timed("cluster → Node Ready", () => startJourneyCluster(images));
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-lvm-journey-"));
  ws = quickstartStack(scratch, cluster, bins.kubernetesPlugin);
}, 1_800_000);

afterAll(async () => {
  console.log(`journey timings (s): ${JSON.stringify({ ...timings }, null, 1)}`);
  console.log(`cluster timings (ms): ${JSON.stringify(cluster?.timings)}`);
  await cluster?.stop();
  ws?.cleanup();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
}, 300_000);

describe("1. pulumi preview", () => {
  it("shows LvmSystem, NodeSet, VolumeGroup, DeviceClass, StorageClass, VolumeSnapshotClass and the TopoLVM release; writes nothing", async () => {
    const output = await timed("preview", () => pulumi(["preview"]));
    for (const type of [
      "pulumi-lvm:index:LvmSystem",
      "pulumi-lvm:index:NodeSet",
      "pulumi-lvm:index:VolumeGroup",
      "pulumi-lvm:index:DeviceClass",
      "pulumi-lvm:index:Topolvm",
      "kubernetes:helm.sh/v4:Chart",
      "kubernetes:storage.k8s.io/v1:StorageClass",
      "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshotClass",
      "kubernetes:lvm.topolvm.io/v2alpha1:LVMNodeSet",
    ])
      expect(output).toContain(type);
    expect(output).toMatch(/\d+ to create/);
    // Nothing written: not in the cluster, not on the disks.
    expect(await get(c().cp, `/api/v1/namespaces/${NAMESPACE}`)).toBeUndefined();
    expect(await get(c().cp, `/apis/storage.k8s.io/v1/storageclasses/${STORAGE_CLASS}`)).toBeUndefined();
    expect(await lvmReport("pvs", "pv_name")).toEqual([]);
    expect(await lvmReport("vgs", "vg_name")).toEqual([]);
  });
});

describe("2. pulumi up", () => {
  it("agent and operator pods Running from our image; LVMNodeSet and LVMNode Ready", async () => {
    await timed("up", () => pulumi(["up", "--yes", "--skip-preview"]));
    const pods: Json[] = (await get(c().cp, `/api/v1/namespaces/${NAMESPACE}/pods`))!.items;
    const ours = pods.filter((p) => p.spec.containers.some((x: Json) => x.image === DEFAULT_IMAGE));
    const commands = ours.map((p) => p.spec.containers[0].command.join(" ")).sort();
    expect(commands).toEqual(["pulumi-lvm agent", "pulumi-lvm operator", "pulumi-lvm operator"]);
    for (const p of ours) expect(p.status.phase).toBe("Running");

    const nodeSet = await timed("LVMNodeSet Ready (after up)", () =>
      waitFor(
        "LVMNodeSet quickstart Ready",
        () => get(c().cp, `/apis/lvm.topolvm.io/v2alpha1/namespaces/${NAMESPACE}/lvmnodesets/quickstart`),
        (o) => conditionTrue(o, "Ready"),
        600_000,
      ),
    );
    expect(nodeSet).toBeDefined();
    const nodes: Json[] = (await get(
      c().cp,
      `/apis/lvm.topolvm.io/v2alpha1/namespaces/${NAMESPACE}/lvmnodes`,
    ))!.items;
    expect(nodes.map((n) => [n.spec?.nodeName ?? n.metadata.name, conditionTrue(n, "Ready")])).toEqual([
      [c().nodeName, true],
    ]);
  });

  it("vg-data and its thin pool on exactly the two selected virtio disks, as the node's own lvm reports", async () => {
    const bySerial = await disksBySerial();
    expect(Object.keys(bySerial).sort()).toEqual(
      expect.arrayContaining(QUICKSTART_DISKS.map((d) => d.serial).sort()),
    );
    const selected = SELECTED_SERIALS.map((s) => bySerial[s]!).sort();
    const pvs = await lvmReport("pvs", "pv_name,vg_name");
    expect(pvs.map(([pv, vg]) => [pv, vg]).sort()).toEqual(selected.map((d) => [d, "vg-data"]));
    const other = bySerial["SN-OTHER333"]!;
    // The disk the selector does not match: no PV, and no signature at all.
    expect(pvs.some(([pv]) => pv === other)).toBe(false);
    expect(
      (
        await c()
          .guest.run(["wipefs", "-n", "-q", other])
          .catch(() => "")
      ).trim(),
    ).toBe("");
    const lvs = await lvmReport("lvs", "vg_name,lv_name,lv_attr");
    expect(lvs).toEqual(expect.arrayContaining([["vg-data", "pool0", expect.stringMatching(/^t/)]]));
  });
});

describe("3. a StatefulSet's PVC on the thin class", () => {
  it("binds on a thin volume of pool0, and its pod writes data", async () => {
    const ns = "default";
    await apply(c().cp, {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "web", namespace: ns },
      spec: {
        serviceName: "web",
        replicas: 1,
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [
              {
                name: "writer",
                image: TOOLS_IMAGE,
                imagePullPolicy: "Never",
                command: [
                  "sh",
                  "-c",
                  "dd if=/dev/urandom of=/data/blob bs=1M count=16 2>/dev/null && sync && sha256sum /data/blob && sleep 36000",
                ],
                volumeMounts: [{ name: "data", mountPath: "/data" }],
              },
            ],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: "data" },
            spec: {
              accessModes: ["ReadWriteOnce"],
              storageClassName: STORAGE_CLASS,
              resources: { requests: { storage: "1Gi" } },
            },
          },
        ],
      },
    });
    const pvc = await timed("StatefulSet PVC Bound, data written", async () => {
      const log = await waitFor(
        "web-0 printed its checksum",
        () =>
          c()
            .podLogs(ns, "web-0")
            .catch(() => ""),
        (l) => /^[0-9a-f]{64}\s+\/data\/blob$/m.test(l),
        900_000,
        async () => (await eventsOf(c().cp, ns, "web-0")).join("\n"),
      );
      expect(log).toMatch(/^[0-9a-f]{64}\s+\/data\/blob$/m);
      return (await get(c().cp, `/api/v1/namespaces/${ns}/persistentvolumeclaims/data-web-0`))!;
    });
    expect(pvc.status.phase).toBe("Bound");
    const pv = (await get(c().cp, `/api/v1/persistentvolumes/${pvc.spec.volumeName}`))!;
    expect(pv.spec.csi.driver).toBe("topolvm.io");
    // The node's lvm: a thin volume in pool0 of vg-data (TopoLVM names the LV by the PV's volume handle).
    const lvs = await lvmReport("lvs", "vg_name,lv_name,pool_lv,lv_attr");
    expect(lvs).toEqual(
      expect.arrayContaining([["vg-data", pv.spec.csi.volumeHandle, "pool0", expect.stringMatching(/^V/)]]),
    );
  });
});
