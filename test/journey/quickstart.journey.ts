/**
 * The user's journey (issue 16) with the real engine: examples/quickstart on a local cluster
 * (journey.ts: the node has four disks). 1 preview, 2 up, 2b the NodeSet in cluster mode
 * (cluster-mode.ts), 3 a StatefulSet's PVC on the thin pool, 3b a snapshot restored, 4 disks added by
 * config (the plan previewed through the agent, then applied exactly), 5 drift shown by refresh and
 * repaired by the operator, 7 no plain secret in state, 6 destroy with Retain, 6b a second stack of
 * the quickstart with deletionPolicy Delete on the disk left free (the node's set is gone after 6):
 * its destroy refused while a PVC uses the volume group, done once it is deleted. Checked with the cluster's API and the node's own
 * tools (node.ts), never through our code. The last tier of `npm test` (test/run.sh); alone:
 * `npm run test:journey` (jest.journey.config.js: *.journey.ts, not *.test.ts).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { RECONCILE_REQUEST_ANNOTATION } from "../../src/api";
import { DEFAULT_IMAGE } from "../../src/version";
import type { Cluster } from "../cluster/cluster";
import { apply, eventsOf, get, podsIn, remove, waitFor } from "../cluster/objects";
import { boundVolume, checksumIn, claimObject, LVM_ENV, runWithClaims } from "../cluster/workloads";
import type { Json } from "../env/cluster";
import type { PulumiWorkspace } from "../pulumi/cli";
import { planList } from "../pulumi/preview-plan";
import {
  enableClusterMode,
  nodeResult,
  nodeSetDisksUrn,
  offIfItFails,
  requireAgentPod,
} from "./cluster-mode";
import {
  ADDED_SERIAL,
  blobChecksum,
  journeyImages,
  setStackConfig,
  NAMESPACE,
  plainCredentials,
  podSummary,
  quickstartStack,
  runPulumi,
  QUICKSTART_DISKS,
  requireJourneyBinaries,
  SELECTED_SERIALS,
  startJourneyCluster,
  STORAGE_CLASS,
  webStatefulSet,
} from "./journey";
import {
  disksBySerial as nodeDisksBySerial,
  lvBytes,
  lvmReport as nodeLvmReport,
  nodeDiagnostics,
  pvTags,
  signatures as nodeSignatures,
} from "./node";
import { Timings } from "../timings";
import { timeline } from "./timeline";

jest.setTimeout(1_800_000);

let cluster: Cluster | undefined;
let ws: PulumiWorkspace | undefined;
let scratch: string | undefined;
let kubernetesPlugin = "";
/** Step → its wall time and the 1-minute load average when it ended. */
// Each step live on stderr (unbuffered, unlike the console) and in a table at the end.
const timings = new Timings((line) =>
  process.stderr.write(`[journey ${new Date().toISOString()}] ${line}\n`),
);
/** What web-0 wrote in step 3: every later step checks the data against it. */
let webSum: string | undefined;

const timed = <T>(name: string, f: () => Promise<T>): Promise<T> => timings.timed(name, f);

function c(): Cluster {
  if (!cluster) throw new Error("the cluster did not start (see the beforeAll error)");
  return cluster;
}

const pulumi = (args: string[]) => runPulumi(ws!, c(), args);

const lvmReport = (cmd: "pvs" | "vgs" | "lvs", fields: string) => nodeLvmReport(c(), cmd, fields);
const signatures = (device: string) => nodeSignatures(c(), device);
const disksBySerial = () => nodeDisksBySerial(c());
const poolBytes = () => lvBytes(c(), "vg-data", "pool0");

const conditionTrue = (o: Json | undefined, type: string) =>
  !!o?.status?.conditions?.some((x: Json) => x.type === type && x.status === "True");

beforeAll(async () => {
  const bins = requireJourneyBinaries();
  const images = await timed("images", () => journeyImages(bins.cluster, () => undefined));
  cluster = await timed("cluster → Node Ready", () => startJourneyCluster(images));
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-lvm-journey-"));
  kubernetesPlugin = bins.kubernetesPlugin;
  ws = quickstartStack(scratch, cluster, bins.kubernetesPlugin);
}, 1_800_000);

afterAll(async () => {
  console.log(timings.table("journey, seconds"));
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
  it("agent and operator pods Running from our image; the LVMNodeSet built when up returns, so lvmd never restarted; the set and its LVMNode Ready", async () => {
    const t0 = Date.now();
    await timed("up", () => pulumi(["up", "--yes", "--skip-preview"]));
    console.log(`the first up, seconds from its start:\n${await timeline(c().cp, [NAMESPACE], t0)}`);
    const pods = await podsIn(c().cp, NAMESPACE);
    const ours = pods.filter((p) => p.spec.containers.some((x: Json) => x.image === DEFAULT_IMAGE));
    const commands = ours.map((p) => p.spec.containers[0].command.join(" ")).sort();
    // One operator: the stack sets operatorReplicas 1 (one node).
    expect(commands).toEqual(["pulumi-lvm agent", "pulumi-lvm operator"]);
    for (const p of ours) expect(p.status.phase).toBe("Running");

    // up returned only once the operator had built the set on its node (NodeSet's awaitNodesReady):
    // LVMNodesReady, for the generation up applied; and by now (TopoLVM installed) Ready.
    const setPath = `/apis/lvm.topolvm.io/v2alpha1/namespaces/${NAMESPACE}/lvmnodesets/quickstart`;
    const nodeSet = (await get(c().cp, setPath))!;
    const nodesReady = nodeSet.status?.conditions?.find((x: Json) => x.type === "LVMNodesReady");
    expect([nodesReady?.status, nodesReady?.observedGeneration]).toEqual([
      "True",
      nodeSet.metadata.generation,
    ]);
    await timed("LVMNodeSet Ready (after up)", () =>
      waitFor(
        "LVMNodeSet quickstart Ready",
        () => get(c().cp, setPath),
        (o) => conditionTrue(o, "Ready"),
        600_000,
      ),
    );
    // So TopoLVM (which depends on the node set) started lvmd on a built volume group: lvmd never
    // exited with "volume group not found" (before, it did in every run, and topolvm-node and its
    // sidecars restarted with it).
    const lvmd = pods.filter((p) => p.metadata.name.startsWith("topolvm-lvmd-"));
    expect(
      lvmd.map((p) => p.status.containerStatuses.map((x: Json) => [x.name, x.restartCount, x.lastState])),
    ).toEqual([[["lvmd", 0, {}]]]);
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
    expect(await signatures(other)).toBe("");
    const lvs = await lvmReport("lvs", "vg_name,lv_name,lv_attr");
    expect(lvs).toEqual(expect.arrayContaining([["vg-data", "pool0", expect.stringMatching(/^t/)]]));
  });
});

describe("2b. the NodeSet in cluster mode (the platform team's layout)", () => {
  let preview = "";

  it("preview shows the node's plan through the running agent (vg-data's members: nothing to do); nothing is written", async () => {
    await requireAgentPod(c());
    await enableClusterMode(ws!, c());
    preview = await timed("preview (cluster mode)", () =>
      offIfItFails(ws!, () => pulumi(["preview", "--diff"])),
    );
    expect(preview).toMatch(/\+.*pulumi-lvm:NodeSetDisks/);
    expect(preview).toContain(c().nodeName);
    expect(preview).toContain(`1 node converged: ${c().nodeName}`);
    expect(preview).toMatch(/steps\s*:\s*0\b/);
    expect([planList(preview, "claimed"), planList(preview, "extended")]).toEqual([[], []]);
    expect((await lvmReport("pvs", "pv_name,vg_name")).filter(([, vg]) => vg === "vg-data")).toHaveLength(
      SELECTED_SERIALS.length,
    );
  });

  it("up records exactly that plan (its hash) for the node, with no step run", async () => {
    await timed("up (cluster mode)", () =>
      offIfItFails(ws!, () => pulumi(["up", "--yes", "--skip-preview"])),
    );
    const node = nodeResult(ws!, c().nodeName);
    expect(node).toMatchObject({ selected: true, stepsDone: 0, blocked: [] });
    expect(preview).toContain(node.planHash);
  });
});

describe("3. a StatefulSet's PVC on the thin class", () => {
  it("binds on a thin volume of pool0, and its pod writes data", async () => {
    const ns = "default";
    await apply(c().cp, webStatefulSet(ns));
    const pvc = await timed("StatefulSet PVC Bound, data written", async () => {
      const log = await waitFor(
        "web-0 printed its checksum",
        () =>
          c()
            .podLogs(ns, "web-0")
            .catch(() => ""),
        (l) => /^[0-9a-f]{64}\s+\/data\/blob$/m.test(l),
        900_000,
        async () =>
          [
            ...(await eventsOf(c().cp, ns, "web-0")),
            ...(await eventsOf(c().cp, ns, "data-web-0")),
            await podSummary(c(), (p) => /^topolvm-/.test(p.metadata.name)),
            await nodeDiagnostics(c()),
          ].join("\n"),
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
      expect(await blobChecksum(c(), ns, "web-restored", "web-restored-reader")).toBe(webSum);
    });
  });
});

describe("4. disks added to the selector (config change), planned through the agent", () => {
  let poolBefore = 0;
  let preview = "";
  /** SN-OTHER333 now holds swap: selected by the new config, it must be excluded and left alone. */
  const swapSerial = "SN-OTHER333";

  it("preview shows the node's plan: SN-CCC444 extends vg-data, the swap disk is excluded and why; nothing is written", async () => {
    poolBefore = await poolBytes();
    expect(poolBefore).toBeGreaterThan(0);
    const bySerial = await disksBySerial();
    const [added, swap] = [bySerial[ADDED_SERIAL]!, bySerial[swapSerial]!];
    await c().guest.run(["mkswap", swap]);
    expect(await signatures(swap)).toBe("swap");
    setStackConfig(ws!, "diskSerials", [...SELECTED_SERIALS, ADDED_SERIAL, swapSerial]);
    preview = await timed("preview (disks added)", () => pulumi(["preview", "--diff"]));
    expect(preview).toMatch(/~.*kubernetes:lvm\.topolvm\.io\/v2alpha1:LVMNodeSet/);
    expect(preview).toContain(ADDED_SERIAL);
    expect(planList(preview, "extended")).toEqual([`${added} → vg-data`]);
    expect(planList(preview, "excluded")).toEqual([
      expect.stringMatching(new RegExp(`^${swap}: .*existing signature swap`)),
    ]);
    expect(planList(preview, "actions")).toEqual(
      expect.arrayContaining([expect.stringMatching(new RegExp(`^vgextend ${added}: `))]),
    );
    const pvs = await lvmReport("pvs", "pv_name,vg_name");
    expect(pvs.filter(([, vg]) => vg === "vg-data")).toHaveLength(SELECTED_SERIALS.length);
  });

  it("up applies exactly that plan: vg-data extended, pool0 regrown, web-0's data intact, the swap disk untouched", async () => {
    await timed("up (disks added)", () => pulumi(["up", "--yes", "--skip-preview"]));
    const bySerial = await disksBySerial();
    const [added, swap] = [bySerial[ADDED_SERIAL]!, bySerial[swapSerial]!];
    const pvs = await lvmReport("pvs", "pv_name,vg_name");
    expect(pvs).toEqual(expect.arrayContaining([[added, "vg-data"]]));
    expect(pvs.some(([pv]) => pv === swap)).toBe(false);
    expect(await signatures(swap)).toBe("swap");
    const grown = await waitFor("pool0 regrown", poolBytes, (bytes) => bytes > poolBefore, 600_000);
    expect(grown).toBeGreaterThan(poolBefore);
    expect(await blobChecksum(c(), "default", "data-web-0", "web-reader-after-extend")).toBe(webSum);
    const node = nodeResult(ws!, c().nodeName);
    expect(preview).toContain(node.planHash);
    expect(node.stepsDone).toBeGreaterThan(0);
  });
});

describe("5. drift: a physical volume's tag removed by hand", () => {
  it("pulumi refresh shows vg-data Degraded with the step to do; the operator repairs it when asked to reconcile", async () => {
    const urn = nodeSetDisksUrn(ws!);
    await timed("refresh (before)", () => pulumi(["refresh", "--yes", "--skip-preview", "--target", urn]));
    const before = nodeResult(ws!, c().nodeName).volumeGroups["vg-data"];
    const device = (await disksBySerial())[SELECTED_SERIALS[0]!]!;
    const tagsOf = () => pvTags(c(), device);
    const tag = (await tagsOf()).find((t) => t.startsWith("pulumi-lvm.kname="));
    expect(tag).toBeDefined();
    await c().guest.run(["pvchange", "--deltag", tag!, device], { env: LVM_ENV });
    expect(await tagsOf()).not.toContain(tag);

    const out = await timed("refresh (drift)", () =>
      pulumi(["refresh", "--yes", "--skip-preview", "--diff", "--target", urn]),
    );
    expect(out).toMatch(/~.*pulumi-lvm:NodeSetDisks/);
    const vg = nodeResult(ws!, c().nodeName).volumeGroups["vg-data"];
    expect(vg.state).toBe("Degraded");
    expect(vg.message).toContain(`pvchange --addtag ${tag} ${device}`);
    // Nothing but the operator writes to the node now. Its resync (every 5 minutes) would re-apply
    // the LVMNode (test/operator/agents.test.ts shows that path); a user who wants the repair
    // now asks for it with the reconcile-request annotation, as here (waiting for the resync cost
    // this run up to 363 s). On a timeout the operator's own log says why.
    const lvmNode = `/apis/lvm.topolvm.io/v2alpha1/namespaces/${NAMESPACE}/lvmnodes/${c().nodeName}`;
    const asked = await c().cp.request("PATCH", lvmNode, {
      metadata: { annotations: { [RECONCILE_REQUEST_ANNOTATION]: String(Date.now()) } },
    });
    expect(asked.status).toBe(200);
    await timed("operator repaired the tag", () =>
      waitFor(
        `${device} tagged ${tag} again`,
        tagsOf,
        (tags) => tags.includes(tag!),
        720_000,
        () => podSummary(c(), (p) => String(p.metadata.name).startsWith("lvm-operator")),
      ),
    );
    expect(before).toMatchObject({ state: "Healthy" }); // last: a step left over is worth seeing, not a stop
  });
});

describe("7. secrets", () => {
  it("no private key and no kubeconfig credential in plain text in the state or the backend directory", () => {
    expect(plainCredentials(ws!, c().cp.kubeconfigPath)).toEqual([]);
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
    // TopoLVM's LogicalVolume CRD was kept (helm.sh/resource-policy: keep), not deleted: deleting it
    // deletes every LogicalVolume, and TopoLVM's finalizer their LVs, or it hangs once TopoLVM is gone.
    const crd = await get(
      c().cp,
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/logicalvolumes.topolvm.io",
    );
    expect(crd?.metadata?.deletionTimestamp).toBeUndefined();
    expect(crd?.metadata?.annotations?.["helm.sh/resource-policy"]).toBe("keep");
  });
});

describe("6b. a second stack with deletionPolicy Delete: destroy refused while a PVC uses it", () => {
  const serial = "SN-OTHER333";
  const vg = "vg-scratch";
  const claim = "scratch-data";
  let ws2: PulumiWorkspace | undefined;
  let root2: string | undefined;
  let volumeHandle = "";
  afterAll(() => {
    ws2?.cleanup();
    if (root2) fs.rmSync(root2, { recursive: true, force: true });
  });

  it("up on the disk vg-data does not use: vg-scratch built, a PVC on it holds data", async () => {
    const disk = (await disksBySerial())[serial]!;
    // Step 4 left a swap signature on it: the user frees the disk before giving it to a set.
    await c().guest.run(["wipefs", "-a", disk]);
    root2 = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-lvm-journey-6b-"));
    ws2 = quickstartStack(root2, c(), kubernetesPlugin);
    setStackConfig(ws2, "diskSerials", [serial]);
    setStackConfig(ws2, "volumeGroup", vg);
    setStackConfig(ws2, "deviceClass", "scratch");
    setStackConfig(ws2, "deletionPolicy", "Delete");
    // Step 6 kept TopoLVM's CRD (its chart marks it helm.sh/resource-policy: keep, which Pulumi's
    // Chart turns into retainOnDelete), so this stack's chart finds it existing: a user installing
    // again tells the Kubernetes provider to adopt existing objects (docs/components.md).
    setStackConfig(ws2, "kubernetes:upsertExistingObjects", "true");
    await timed("up (stack 2, deletionPolicy Delete)", () =>
      runPulumi(ws2!, c(), ["up", "--yes", "--skip-preview"]),
    );
    const sum = await timed("PVC on vg-scratch, data written", async () => {
      await apply(c().cp, claimObject("default", claim, "lvms-scratch", "1Gi"));
      const log = await runWithClaims(
        c(),
        "default",
        `${claim}-writer`,
        { data: claim },
        "dd if=/dev/urandom of=/data/blob bs=1M count=16 2>/dev/null && sync && sha256sum /data/blob",
        { timeoutMs: 900_000 },
      );
      return checksumIn(log, "/data/blob");
    });
    expect(sum).toMatch(/^[0-9a-f]{64}$/);
    const { pv } = await boundVolume(c(), "default", claim, 60_000);
    volumeHandle = pv.spec.csi.volumeHandle;
    expect(await lvmReport("lvs", "vg_name,lv_name")).toEqual(expect.arrayContaining([[vg, volumeHandle]]));
    expect((await lvmReport("pvs", "pv_name,vg_name")).filter(([, g]) => g === vg)).toEqual([[disk, vg]]);
  });

  /**
   * Where a deleted claim's volume is on its way out (a failure's report): the writer pod, the PVC,
   * its PV and TopoLVM's LogicalVolume (each gone, or its phase, finalizers and deletion time), their
   * events, and TopoLVM's pods with their logs.
   */
  async function releaseChain(claimName: string, handle: string): Promise<string> {
    const pvc = await get(c().cp, `/api/v1/namespaces/default/persistentvolumeclaims/${claimName}`);
    const pvName = pvc?.spec?.volumeName as string | undefined;
    const pv = pvName ? await get(c().cp, `/api/v1/persistentvolumes/${pvName}`) : undefined;
    const lvs = ((await get(c().cp, "/apis/topolvm.io/v1/logicalvolumes"))?.items ?? []) as Json[];
    const lv = lvs.find((l) => l.status?.volumeID === handle);
    const line = (what: string, o: Json | undefined) =>
      o
        ? `${what}: phase ${o.status?.phase ?? "-"}, finalizers ${JSON.stringify(o.metadata.finalizers ?? [])}, deleted at ${o.metadata.deletionTimestamp ?? "-"}`
        : `${what}: gone`;
    const writer = await get(c().cp, `/api/v1/namespaces/default/pods/${claimName}-writer`);
    return [
      line(`pod default/${claimName}-writer`, writer),
      line(`PVC default/${claimName}`, pvc),
      ...(await eventsOf(c().cp, "default", claimName)),
      line(`PV ${pvName ?? "(none named)"}`, pv),
      ...(pvName ? await eventsOf(c().cp, "default", pvName) : []),
      line(`LogicalVolume of ${handle}`, lv),
      await podSummary(c(), (p) => /^topolvm-(controller|node)/.test(p.metadata.name)),
    ].join("\n");
  }

  it("pulumi destroy fails promptly naming the PVC, the node and vg-scratch; the volume and TopoLVM stay", async () => {
    const r = await timed("destroy refused (PVC in use)", () =>
      // Live on stderr: a destroy that hangs shows where (it took over 8 minutes once).
      ws2!.runAsync(["destroy", "--yes", "--skip-preview"], {
        timeoutMs: 300_000,
        echo: (text) => process.stderr.write(text),
      }),
    );
    if (r.code === null) throw new Error(`${r.output}\n----- pods -----\n${await podSummary(c())}`);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain(
      `volume group ${vg} on node ${c().nodeName} still holds logical volume ${volumeHandle}`,
    );
    expect(r.output).toContain(`delete the PVC default/${claim}, then destroy again`);
    // Nothing was removed: the LV, the set, and TopoLVM (which deletes the volume once its PVC goes).
    expect(await lvmReport("lvs", "vg_name,lv_name")).toEqual(expect.arrayContaining([[vg, volumeHandle]]));
    const set = await get(
      c().cp,
      `/apis/lvm.topolvm.io/v2alpha1/namespaces/${NAMESPACE}/lvmnodesets/quickstart`,
    );
    expect(set?.metadata?.deletionTimestamp).toBeUndefined();
    // There, not only not being deleted: a destroy that got past the guard deletes TopoLVM outright,
    // and `csi?.metadata?.deletionTimestamp` alone passed on a CSIDriver that was gone (CI, stop 33).
    const csi = await get(c().cp, "/apis/storage.k8s.io/v1/csidrivers/topolvm.io");
    expect(csi).toBeDefined();
    expect(csi!.metadata.deletionTimestamp).toBeUndefined();
    const controller = await get(
      c().cp,
      `/apis/apps/v1/namespaces/${NAMESPACE}/deployments/topolvm-controller`,
    );
    expect(controller?.metadata?.name).toBe("topolvm-controller");
    expect(controller!.metadata.deletionTimestamp).toBeUndefined();
  });

  it("after the PVC is deleted, pulumi destroy removes vg-scratch and its PV label; vg-data stays", async () => {
    const disk = (await disksBySerial())[serial]!;
    // The writer pod was deleted when it ended (runWithClaims), but the kubelet removes it only once
    // its volume is unmounted, and until then it keeps the PVC (kubernetes.io/pvc-protection): two
    // waits, so a failure says which part of the chain stalled.
    await timed("writer pod gone", () =>
      waitFor(
        `pod default/${claim}-writer gone`,
        () => get(c().cp, `/api/v1/namespaces/default/pods/${claim}-writer`),
        (p) => p === undefined,
        300_000,
        () => releaseChain(claim, volumeHandle),
      ),
    );
    await timed("PVC deleted, its LV removed by TopoLVM", async () => {
      await remove(c().cp, `/api/v1/namespaces/default/persistentvolumeclaims/${claim}`);
      await waitFor(
        `LV ${vg}/${volumeHandle} removed`,
        () => lvmReport("lvs", "vg_name,lv_name"),
        (lvs) => !lvs.some(([g, l]) => g === vg && l === volumeHandle),
        300_000,
        () => releaseChain(claim, volumeHandle),
      );
    });
    await timed("destroy (stack 2, deletionPolicy Delete)", () =>
      runPulumi(ws2!, c(), ["destroy", "--yes", "--skip-preview"]),
    );
    expect(ws2!.exportState().deployment.resources ?? []).toEqual([]);
    expect(await lvmReport("vgs", "vg_name")).toEqual([["vg-data"]]);
    expect((await lvmReport("pvs", "pv_name")).some(([pv]) => pv === disk)).toBe(false);
    expect(await signatures(disk)).toBe("");
  });
});
