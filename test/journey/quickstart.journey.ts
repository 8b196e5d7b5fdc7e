/**
 * The user's journey (issue 16), end to end with the real engine: examples/quickstart on a local
 * cluster (test/journey/journey.ts: the cluster tier's node with four disks, two of them matching
 * the quickstart's serials): 1. `pulumi preview`, 2. `pulumi up`, 3. a StatefulSet whose PVC binds
 * on the thin pool, 3b. a VolumeSnapshot restored with the same checksum, 4. a disk added to the
 * selector by config (preview, up: VG extended, pool regrown, data intact), 7. no secret in plain
 * text in the state, 6. `pulumi destroy` leaving the volume group and the data (Retain). Not yet:
 * 2b (a cluster-mode stack's preview showing the node's plan) and 5 (refresh after an
 * out-of-band change). Every step is checked with the cluster's API and the node's own lvm tools,
 * never through our code.
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
import { checksumIn, claimObject, runWithClaims } from "../cluster/workloads";
import type { Json } from "../env/cluster";
import { PulumiWorkspace } from "../pulumi/cli";
import {
  ADDED_SERIAL,
  disksBySerial as journeyDisksBySerial,
  journeyImages,
  lvmReport as journeyLvmReport,
  setStackConfig,
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

const LONG = { timeoutMs: 1_800_000 };
let cluster: Cluster | undefined;
let ws: PulumiWorkspace | undefined;
let scratch: string | undefined;
const timings: Record<string, number> = {};
/** What web-0 wrote in step 3: every later step checks the data against it. */
let webSum: string | undefined;

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

const lvmReport = (cmd: "pvs" | "vgs" | "lvs", fields: string) => journeyLvmReport(c(), cmd, fields);
const disksBySerial = () => journeyDisksBySerial(c());
/** pool0 of vg-data in bytes, from the node's own lvs. */
const poolBytes = async () =>
  Number(
    (await journeyLvmReport(c(), "lvs", "vg_name,lv_name,lv_size", ["--units", "b", "--nosuffix"])).find(
      ([vg, lv]) => vg === "vg-data" && lv === "pool0",
    )?.[2],
  );

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
      webSum = checksumIn(log, "/data/blob");
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

/** web-0's volume read by a new pod on the same node (ReadWriteOnce is per node): its checksum. */
async function readWebData(podName: string): Promise<string | undefined> {
  const log = await runWithClaims(c(), "default", podName, { data: "data-web-0" }, "sha256sum /data/blob", {
    timeoutMs: 900_000,
  });
  return checksumIn(log, "/data/blob");
}

describe("3b. a VolumeSnapshot of the StatefulSet's volume", () => {
  it("becomes ready, and a PVC restored from it holds the same checksum", async () => {
    expect(webSum).toMatch(/^[0-9a-f]{64}$/);
    const ns = "default";
    await timed("VolumeSnapshot ready + restored PVC read", async () => {
      await apply(c().cp, {
        apiVersion: "snapshot.storage.k8s.io/v1",
        kind: "VolumeSnapshot",
        metadata: { name: "web-snap", namespace: ns },
        // The quickstart's VolumeSnapshotClass has the StorageClass's name (the API's default naming).
        spec: { volumeSnapshotClassName: STORAGE_CLASS, source: { persistentVolumeClaimName: "data-web-0" } },
      });
      await waitFor(
        "VolumeSnapshot web-snap readyToUse",
        () => get(c().cp, `/apis/snapshot.storage.k8s.io/v1/namespaces/${ns}/volumesnapshots/web-snap`),
        (s) => s?.status?.readyToUse === true,
        600_000,
        async () => (await eventsOf(c().cp, ns, "web-snap")).join("\n"),
      );
      const dataSource = { name: "web-snap", kind: "VolumeSnapshot", apiGroup: "snapshot.storage.k8s.io" };
      await apply(c().cp, claimObject(ns, "web-restored", STORAGE_CLASS, "1Gi", dataSource));
      const log = await runWithClaims(
        c(),
        ns,
        "web-restored-reader",
        { data: "web-restored" },
        "sha256sum /data/blob",
        {
          timeoutMs: 900_000,
        },
      );
      expect(checksumIn(log, "/data/blob")).toBe(webSum);
    });
  });
});

describe("4. a disk added to the selector (config change)", () => {
  let poolBefore = 0;

  it("preview shows the LVMNodeSet's selector gaining the disk; nothing is written", async () => {
    poolBefore = await poolBytes();
    expect(poolBefore).toBeGreaterThan(0);
    setStackConfig(ws!, "diskSerials", [...SELECTED_SERIALS, ADDED_SERIAL]);
    const out = await timed("preview (disk added)", () => pulumi(["preview", "--diff"]));
    expect(out).toMatch(/~.*kubernetes:lvm\.topolvm\.io\/v2alpha1:LVMNodeSet/);
    expect(out).toContain(ADDED_SERIAL);
    const pvs = await lvmReport("pvs", "pv_name,vg_name");
    expect(pvs.filter(([, vg]) => vg === "vg-data")).toHaveLength(SELECTED_SERIALS.length);
  });

  it("up extends vg-data onto it and regrows pool0; web-0's data is intact", async () => {
    await timed("up (disk added)", () => pulumi(["up", "--yes", "--skip-preview"]));
    const added = (await disksBySerial())[ADDED_SERIAL]!;
    await timed("vg-data extended (operator → agent)", () =>
      waitFor(
        `${added} (${ADDED_SERIAL}) a PV of vg-data`,
        () => lvmReport("pvs", "pv_name,vg_name"),
        (pvs) => pvs.some(([pv, vg]) => pv === added && vg === "vg-data"),
        600_000,
        () => podSummary(c()),
      ),
    );
    const grown = await waitFor("pool0 regrown", poolBytes, (bytes) => bytes > poolBefore, 600_000);
    expect(grown).toBeGreaterThan(poolBefore);
    expect(await readWebData("web-reader-after-extend")).toBe(webSum);
  });
});

describe("7. secrets", () => {
  it("no private key and no kubeconfig credential in plain text in the state or the backend directory", () => {
    const kubeconfig = fs.readFileSync(c().cp.kubeconfigPath, "utf8");
    const credentials = [...kubeconfig.matchAll(/(?:client-key-data|token): *(\S+)/g)].map((m) => m[1]!);
    expect(credentials.length).toBeGreaterThan(0);
    const files = [
      { file: "pulumi stack export", text: ws!.exportState().text },
      ...PulumiWorkspace.filesUnder(ws!.backend),
    ];
    for (const { file, text } of files) {
      expect({ file, plainKey: /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text) }).toEqual({
        file,
        plainKey: false,
      });
      for (const secret of credentials)
        expect({ file, leaks: text.includes(secret) }).toEqual({ file, leaks: false });
    }
  });
});

describe("6. pulumi destroy (deletionPolicy Retain, the default)", () => {
  it("removes what Pulumi made and leaves vg-data, its pool and the claim's data on the node", async () => {
    await timed("destroy", () => pulumi(["destroy", "--yes", "--skip-preview"]));
    expect(ws!.exportState().deployment.resources ?? []).toEqual([]);
    const vgs = await lvmReport("vgs", "vg_name");
    expect(vgs).toEqual([["vg-data"]]);
    const lvs = await lvmReport("lvs", "vg_name,lv_name");
    expect(lvs).toEqual(expect.arrayContaining([["vg-data", "pool0"]]));
    // TopoLVM is gone, so no new claim can be provisioned; the LV web-0's data lives on is still there.
    const pvc = await get(c().cp, "/api/v1/namespaces/default/persistentvolumeclaims/data-web-0");
    const pv = await get(c().cp, `/api/v1/persistentvolumes/${pvc!.spec.volumeName}`);
    expect(lvs).toEqual(expect.arrayContaining([["vg-data", pv!.spec.csi.volumeHandle]]));
  });
});
