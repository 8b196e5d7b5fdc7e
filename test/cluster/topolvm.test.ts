/**
 * The cluster tier's CI file: one real single-node cluster (test/cluster/cluster.ts) for
 * everything users run on a node, in the order they run it.
 *
 * 1. The node agent as users deploy it: LvmSystem's DaemonSet (lvm-system.ts renders it with
 *    LvmSystem's own functions) from the product image, scheduled by the real scheduler and run by
 *    the real kubelet + containerd, privileged in the host PID namespace; `kubectl exec` into its
 *    container through the apiserver (Cluster.exec, pod-exec.ts). The provider's client plans
 *    and applies an LVMNode spec through it (a thin class on a pool, a thick class); the guest's own
 *    `vgs`/`pvs`/`lvs` check what it did, and the disk the spec does not select stays untouched.
 * 2. TopoLVM's Helm chart installed with the values LvmSystem derives, and then what users ask: does
 *    a thick PVC bind, can a pod write it and another read it back after an expansion, does a thin class
 *    overcommit (seed 003's plan at the PVC level), is a thick PVC that cannot fit refused by the
 *    scheduler with a reason, and does csi-sanity pass on the deployed driver. Snapshots and restores
 *    are the journey's (test/journey: a VolumeSnapshot of the quickstart's thin class restored into a
 *    new PVC holds the same checksum): the same steps here cost 200–490 s of every CI run.
 *
 *   npm run test:cluster -- test/cluster/topolvm.test.ts
 *
 * One cluster boot for all of it: a boot to Node Ready is 2–4 minutes under TCG.
 */
import * as fs from "node:fs";
import { agentClient, type AgentEndpoint } from "../../src/agent-client/agent-client";
import { PACKAGE_VERSION } from "../../src/version";
import { requireClusterBinaries } from "./binaries";
import { Cluster, startCluster } from "./cluster";
import {
  PAUSE_IMAGE,
  pauseImage,
  productImages,
  snapshotControllerImage,
  TOOLS_IMAGE,
  toolsImage,
  topolvmImageArchive,
} from "./images";
import { agentEndpoint, agentObjects, installAgent } from "./lvm-system";
import { DISKS, NODE_SET, SC, SPEC, THICK_VG, THIN_VG } from "./node-layout";
import { apply, eventsOf, get, remove, waitFor, waitPodsReady } from "./objects";
import { runCsiSanity, SANITY_FOCUS } from "./csi-sanity";
import { installTopolvm, topolvmSettings } from "./topolvm";
import { boundVolume, checksumIn, claimObject, guestLvs, LVM_ENV, runWithClaims } from "./workloads";

const GiB = 1024 ** 3;
const NS = "lvm-system";
const APP = "default";
/** The node port the test reaches the agent pod on (lvm-system.ts agentPortOnNode). */
const AGENT_PORT = 30080;
let cluster: Cluster | undefined;
let install: Awaited<ReturnType<typeof installAgent>> | undefined;
let agent: AgentEndpoint | undefined;
let topolvmReady = false;
const timings: Record<string, number> = {};

function c(): Cluster {
  if (!cluster) throw new Error("the cluster did not start (see the beforeAll error)");
  return cluster;
}

/** Later stages need earlier ones: fail with what is missing instead of a confusing error. */
function need(stage: "agent" | "topolvm"): void {
  c();
  if (!agent) throw new Error("the agent pod is not running (see the first test's error)");
  if (stage === "topolvm" && !topolvmReady)
    throw new Error("TopoLVM is not installed (see its test's error)");
}

async function timed<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  try {
    return await fn();
  } finally {
    timings[name] = Date.now() - t0;
  }
}

/** Every pod in `namespace` (at least `atLeast`) Running and ready; fails with the node's logs. */
const allPodsReady = (namespace: string, atLeast: number) =>
  waitPodsReady(c().cp, namespace, atLeast, 600_000, () => c().nodeLogs(30));

async function guestLvm(args: string[]): Promise<string> {
  return c().guest.run(["lvm", ...args], { env: LVM_ENV });
}

jest.setTimeout(900_000);

beforeAll(async () => {
  const bins = requireClusterBinaries("topolvm");
  const ours = await timed("product image (its layers cached by test/image/install.sh)", () =>
    productImages(() => undefined),
  );
  const seededImages = await timed("images (cached after the first run)", async () => [
    await pauseImage(bins),
    await toolsImage(),
    await topolvmImageArchive(bins),
    await snapshotControllerImage(bins),
    ours.base,
  ]);
  cluster = await timed("startCluster → Node Ready", () =>
    startCluster({
      disks: DISKS,
      seededImages,
      // The product image changes with every commit: imported on each boot (its Debian layer is
      // on the seeded state disk already, so only its package layer is unpacked).
      images: [ours.product.archive],
      sandboxImage: PAUSE_IMAGE,
      forwardPorts: [AGENT_PORT],
    }),
  );
}, 1_800_000);

afterAll(async () => {
  console.log(`cluster tier timings (ms): ${JSON.stringify({ ...timings, ...cluster?.timings }, null, 1)}`);
  await cluster?.stop();
}, 300_000);

describe("the agent as LvmSystem deploys it", () => {
  test("its DaemonSet's pod runs on the node from our image, privileged in the host PID namespace", async () => {
    install = await timed("agent DaemonSet applied → pod Ready", () =>
      installAgent(c().cp, {
        name: "pl",
        node: c().nodeName,
        topolvm: topolvmSettings(NODE_SET, SPEC),
        why: () => c().nodeLogs(30),
      }),
    );
    const rendered = agentObjects("pl", { agentImagePullPolicy: "Never" }).objects.find(
      (o) => o.kind === "DaemonSet",
    )!;
    const want = rendered.spec.template.spec;
    const pod = install.pod;
    expect(pod.spec.hostPID).toBe(true);
    expect(pod.spec.containers[0].securityContext).toEqual(want.containers[0].securityContext);
    expect(pod.status.containerStatuses[0]).toMatchObject({
      ready: true,
      image: expect.stringContaining("localhost/pulumi-lvm:"),
    });
    agent = await agentEndpoint(c().cp, c().guest, install, c().nodeName, AGENT_PORT);
  });

  test("kubectl exec through the apiserver reaches its container: output, stderr apart, exit codes, stdin", async () => {
    need("agent");
    const { namespace, name } = install!.pod.metadata;
    const container = install!.pod.spec.containers[0].name;
    const exec = (argv: string[], stdin?: string) =>
      c().exec(namespace, name, argv, { container, ...(stdin === undefined ? {} : { stdin }) });
    // apiserver → CONNECT proxy → kubelet → containerd → runc exec, and back, for the product's binary.
    const version = await timed("exec round trip: pulumi-lvm --version", () =>
      exec(["pulumi-lvm", "--version"]),
    );
    expect(version).toEqual({
      stdout: `pulumi-lvm ${PACKAGE_VERSION}\n`,
      stderr: "",
      exitCode: 0,
      protocol: "v5.channel.k8s.io",
    });
    expect(await exec(["sh", "-c", "echo to-out; echo to-err >&2; exit 3"])).toMatchObject({
      stdout: "to-out\n",
      stderr: "to-err\n",
      exitCode: 3,
    });
    // The loop ends only when stdin is closed: the v5 close signal, passed on by the apiserver.
    const counted = await exec(
      ["sh", "-c", 'n=0; while read -r l; do n=$((n+1)); done; echo "$n lines"'],
      "a\nb\nc\n",
    );
    expect(counted).toMatchObject({ stdout: "3 lines\n", exitCode: 0 });
    // In the host PID namespace, as LvmSystem configures the agent: pid 1 is the node's init.
    const comm = "read -r c </proc/1/comm; echo $c";
    expect((await exec(["sh", "-c", comm])).stdout).toBe(await c().guest.run(["sh", "-c", comm]));
    await expect(c().exec(namespace, "no-such-pod", ["true"])).rejects.toThrow(
      `exec in pod ${namespace}/no-such-pod of ["true"]: the apiserver refused the upgrade: HTTP 404: pods "no-such-pod" not found`,
    );
  });

  test("plans and applies the LVMNode spec on the selected virtio disks only, checked with the guest's own lvm", async () => {
    need("agent");
    const client = agentClient();
    const plan = await timed("agent pod: plan", () => client.plan(agent!, SPEC));
    expect(plan.blocked).toEqual([]);
    expect(plan.actions.map((a) => a.op)).toEqual(expect.arrayContaining(["pvcreate", "vgcreate"]));
    await timed("agent pod: apply", () => client.apply(agent!, SPEC, plan.hash));

    const serialOf = async (dev: string) =>
      (await c().guest.run(["cat", `/sys/block/${dev.replace("/dev/", "")}/serial`])).trim();
    const pvs = (await guestLvm(["pvs", "--noheadings", "-o", "pv_name,vg_name"]))
      .trim()
      .split("\n")
      .map((l) => l.trim().split(/\s+/))
      .filter(([, vg]) => vg === THIN_VG || vg === THICK_VG);
    const byVg = Object.fromEntries(
      await Promise.all(pvs.map(async ([pv, vg]) => [vg!, await serialOf(pv!)] as const)),
    );
    // Exactly one PV per VG, on the disk its selector names; the spare disk has no PV.
    expect(pvs).toHaveLength(2);
    expect(byVg).toEqual({ [THIN_VG]: DISKS[0]!.serial, [THICK_VG]: DISKS[1]!.serial });
    const pool = (await guestLvm(["lvs", "--noheadings", "-o", "lv_name,lv_attr", THIN_VG])).trim();
    expect(pool).toMatch(/^pool\s+twi/);
    // The agent wrote lvmd's device classes on the host path LvmSystem mounts.
    const lvmd = await c().guest.run(["cat", "/etc/topolvm/lvmd.yaml"]);
    expect(lvmd).toContain(THIN_VG);
    // Planned again, the same spec needs nothing more.
    expect((await client.plan(agent!, SPEC)).actions).toEqual([]);
  });
});

test("TopoLVM's chart and the snapshot controller install on our volume groups: pods Running and ready", async () => {
  need("agent");
  const bins = requireClusterBinaries("topolvm");
  await timed("TopoLVM chart + snapshot controller installed → pods ready", async () => {
    await installTopolvm(c().cp, bins, { namespace: NS, nodeSet: NODE_SET, template: SPEC });
    // The agent's pod, topolvm-controller, topolvm-node and lvmd (one node set: topolvm-lvmd-0).
    await allPodsReady(NS, 4);
    await allPodsReady("kube-system", 1);
  });
  topolvmReady = true;
});

const pvc = (name: string, storageClass: string, size: string) => claimObject(APP, name, storageClass, size);

/** Runs `script` in a pod with the claim at /data; resolves with its log once it succeeded. */
const runOn = (claim: string, name: string, script: string) =>
  runWithClaims(c(), APP, name, { data: claim }, script);

const WRITE = "dd if=/dev/urandom of=/data/f bs=1M count=32 2>/dev/null; sync; sha256sum /data/f";
const READ = "sha256sum /data/f";
const sumOf = (log: string) => checksumIn(log, "/data/f");
const lvs = () => guestLvs(c());
const pvOf = async (claim: string) => (await boundVolume(c(), APP, claim)).pv;

// A thick PVC only: the thin class binds, is written and read in the overcommit test below (and in
// the journey's StatefulSet); a thin PVC's own bind and expansion here cost ~300 s of every CI run
// for the same TopoLVM calls (CreateVolume, NodeExpandVolume: lvextend, then resize2fs) as these.
describe("a thick PVC", () => {
  const cls = "thick";
  const claim = `${cls}-a`;
  let sum: string | undefined;

  // The checksum is read back by another pod after the expansion (the next test): a reader pod here
  // as well cost a pod start (15–90 s on the TCG node) for nothing that test does not show.
  test("binds, and a pod writes a checksum on it; lvs shows the LV in our VG", async () => {
    need("topolvm");
    await apply(c().cp, pvc(claim, SC[cls]!, "1Gi"));
    const t0 = Date.now();
    const log = await runOn(claim, `${cls}-writer`, WRITE);
    timings[`${cls}: PVC + writer pod → Succeeded`] = Date.now() - t0;
    sum = sumOf(log);
    expect(sum).toMatch(/^[0-9a-f]{64}$/);
    const pv = await pvOf(claim);
    const lv = (await lvs()).find(
      (l) => l.vg_name === THICK_VG && pv.spec.csi.volumeHandle.includes(l.lv_name),
    );
    expect(lv).toMatchObject({ vg_name: THICK_VG, pool_lv: "" });
  });

  test("expands to 2Gi: the LV grows and the filesystem with it; a new pod reads the same checksum", async () => {
    need("topolvm");
    await c().cp.request("PATCH", `/api/v1/namespaces/${APP}/persistentvolumeclaims/${claim}`, {
      spec: { resources: { requests: { storage: "2Gi" } } },
    });
    const pv = await pvOf(claim);
    await waitFor(
      `the LV of ${claim} at 2 GiB`,
      lvs,
      (ls) => ls.some((l) => pv.spec.csi.volumeHandle.includes(l.lv_name) && Number(l.lv_size) === 2 * GiB),
      300_000,
    );
    const df = await runOn(claim, `${cls}-df`, `df -k /data; ${READ}`);
    const kb = Number(/\s(\d+)\s+\d+\s+\d+\s+\d+%\s+\/data/.exec(df)?.[1]);
    expect(kb * 1024).toBeGreaterThan(1.8 * GiB);
    expect(sumOf(df)).toBe(sum);
  });
});

describe("thin overcommit at the PVC level (seed 003's plan)", () => {
  const claims = ["over-0", "over-1", "over-2"];

  test("thin PVCs each larger than the whole VG bind, are written and read, and their space returns when deleted", async () => {
    need("topolvm");
    const poolBefore = Number(
      (await lvs()).find((l) => l.vg_name === THIN_VG && l.lv_name === "pool")!.data_percent,
    );
    // 3 × 8Gi on a 4 GiB disk: each claim alone is twice the volume group. One writer pod and one
    // reader pod mount all three (a pod start costs 15–60 s on the TCG node; six of them made this
    // test run past its timeout under load).
    for (const claim of claims) await apply(c().cp, pvc(claim, SC.thin!, "8Gi"));
    const mounts = Object.fromEntries(claims.map((cl) => [cl, cl]));
    const each = (cmd: (dir: string) => string) => claims.map((cl) => cmd(`/${cl}`)).join("; ");
    const write = each(
      (d) => `dd if=/dev/urandom of=${d}/f bs=1M count=32 2>/dev/null; sync; sha256sum ${d}/f`,
    );
    const sumsOf = (log: string) => Object.fromEntries(claims.map((cl) => [cl, checksumIn(log, `/${cl}/f`)]));
    const written = sumsOf(await runWithClaims(c(), APP, "over-writer", mounts, write));
    for (const cl of claims) expect(written[cl]).toMatch(/^[0-9a-f]{64}$/);
    const read = await runWithClaims(
      c(),
      APP,
      "over-reader",
      mounts,
      each((d) => `sha256sum ${d}/f`),
    );
    expect(sumsOf(read)).toEqual(written);
    const thinLvs = (await lvs()).filter((l) => l.vg_name === THIN_VG && l.pool_lv === "pool");
    const handles = await Promise.all(
      claims.map(async (cl) => (await pvOf(cl)).spec.csi.volumeHandle as string),
    );
    for (const h of handles) {
      const lv = thinLvs.find((l) => h.includes(l.lv_name));
      expect(Number(lv?.lv_size)).toBe(8 * GiB);
    }
    const poolFull = Number(
      (await lvs()).find((l) => l.vg_name === THIN_VG && l.lv_name === "pool")!.data_percent,
    );
    expect(poolFull).toBeGreaterThan(poolBefore);

    for (const claim of claims)
      await remove(c().cp, `/api/v1/namespaces/${APP}/persistentvolumeclaims/${claim}`);
    // A chain of slow steps on the emulated node: the reader pod ends and its volumes are unpublished
    // and unstaged (the LVs stay open until then), the claims' protection is released, and the
    // provisioner deletes each volume, retrying a failed delete with a backoff of up to 5 minutes.
    // 300 s ran out once with every LV still open (CI, load 4-5, TopoLVM's pods restarting).
    await waitFor(
      "the overcommitted LVs removed and the pool's space returned",
      lvs,
      (ls) =>
        !ls.some((l) => handles.some((h) => h.includes(l.lv_name))) &&
        Number(ls.find((l) => l.vg_name === THIN_VG && l.lv_name === "pool")!.data_percent) <=
          poolBefore + 0.5,
      600_000,
    );
  }, 1_200_000); // two pod starts, the writes, and the wait above
});

test("a thick PVC that cannot fit is refused by the scheduler, with the reason in the pod's events", async () => {
  need("topolvm");
  await apply(c().cp, pvc("too-big", SC.thick!, "5Gi"));
  await apply(c().cp, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "too-big-user", namespace: APP },
    spec: {
      containers: [
        {
          name: "main",
          image: TOOLS_IMAGE,
          imagePullPolicy: "Never",
          command: ["/bin/sleep", "3600"],
          volumeMounts: [{ name: "data", mountPath: "/data" }],
        },
      ],
      volumes: [{ name: "data", persistentVolumeClaim: { claimName: "too-big" } }],
    },
  });
  // The scheduler may first refuse for a reason of its own cache ('persistentvolumeclaim "too-big"
  // not found', when the pod reaches it before the claim does): wait for the refusal that names storage.
  const storage = /FailedScheduling.*did not have enough free storage/;
  const events = await waitFor(
    "a FailedScheduling event for too-big-user naming free storage",
    () => eventsOf(c().cp, APP, "too-big-user"),
    (ev) => ev.some((e) => storage.test(e)),
    180_000,
  );
  expect(events.filter((e) => / Scheduled: /.test(e))).toEqual([]);
  const pod = await get(c().cp, `/api/v1/namespaces/${APP}/pods/too-big-user`);
  expect(pod.status.phase).toBe("Pending");
  expect((await get(c().cp, `/api/v1/namespaces/${APP}/persistentvolumeclaims/too-big`)).status.phase).toBe(
    "Pending",
  );
});

test(`csi-sanity on the thin class (${SANITY_FOCUS ? `focus: ${SANITY_FOCUS}` : "full"})`, async () => {
  need("topolvm");
  if (!fs.existsSync(c().binaries.csiSanity)) {
    throw new Error(`${c().binaries.csiSanity} is missing: run bash test/cluster/install.sh`);
  }
  // The earlier tests' pods come and go; a starved plugin may be in a probe restart.
  await allPodsReady(NS, 4);
  const r = await runCsiSanity(c(), {
    namespace: NS,
    deviceClass: "thin",
    volumeBytes: GiB,
    expandBytes: 2 * GiB,
  });
  timings["csi-sanity"] = r.ms;
  console.log(`csi-sanity: ${r.summary}`);
  // The first failure's report in the assertion itself: a CI log that keeps only the failed tests'
  // messages (not the console) must still say why.
  if (r.code !== 0 || !/SUCCESS!/.test(r.summary)) {
    throw new Error(`csi-sanity exited ${r.code}: ${r.summary}\n${r.failure ?? ""}`);
  }
}, 1_900_000);
