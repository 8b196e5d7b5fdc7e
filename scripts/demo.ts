/**
 * `npm run demo`: the whole product on a local cluster, as a new user would try it.
 *
 *   1. checks every binary it needs (else: the command that builds it, exit 1)
 *   2. builds/loads the images: this repository's (npm run image), TopoLVM's, pause, tools
 *   3. boots the cluster: the control plane on this host, one node (a qemu guest running containerd
 *      and a kubelet) with four disks, two of them matching the quickstart's selector
 *   4. `pulumi preview`, then `pulumi up` of examples/quickstart with the real engine and the real
 *      Kubernetes provider (nothing downloaded), pointed at the local image and chart by config
 *   5. a PVC on the thin class and a pod that writes to it; the node's own `vgs`/`lvs`
 *
 * The cluster stays up while this process runs: qemu, the control plane and the kubelet's proxy are
 * its children (qemu dies with it), so it cannot detach. It prints the kubeconfig and a file to
 * source for running `pulumi` by hand, then waits. Ctrl-C, or `npm run demo -- --down` from another
 * shell, tears everything down. See README.md ("Try it locally").
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Cluster } from "../test/cluster/cluster";
import {
  journeyImages,
  podSummary,
  quickstartStack,
  requireJourneyBinaries,
  startJourneyCluster,
  writeToNewClaim,
} from "../test/journey/journey";
import { nodeLvm } from "../test/journey/node";
import type { PulumiWorkspace } from "../test/pulumi/cli";
import { cacheDir } from "../test/vm/guest";

const STATE_DIR = path.join(cacheDir(), "demo");
const STATE_FILE = path.join(STATE_DIR, "demo.json");
const t0 = Date.now();
const timings: Array<[string, number]> = [];
const since = () => ((Date.now() - t0) / 1000).toFixed(1).padStart(6);
const log = (line: string) => process.stdout.write(`[${since()}s] ${line}\n`);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

interface DemoState {
  readonly pid: number;
  readonly kubeconfig?: string;
  readonly workspace?: string;
}

function readState(): DemoState | undefined {
  try {
    return JSON.parse(fs.readFileSync(STATE_FILE, "utf8")) as DemoState;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function step<T>(name: string, f: () => Promise<T>): Promise<T> {
  const start = Date.now();
  log(`${name} ...`);
  try {
    return await f();
  } finally {
    const s = (Date.now() - start) / 1000;
    timings.push([name, s]);
    log(`${name}: ${s.toFixed(1)} s`);
  }
}

async function down(): Promise<number> {
  const state = readState();
  if (!state || !alive(state.pid)) {
    console.log(state ? `the demo (pid ${state.pid}) is not running; cleaned up` : "no demo is running");
    fs.rmSync(STATE_DIR, { recursive: true, force: true });
    return 0;
  }
  console.log(`stopping the demo (pid ${state.pid}): the node, the control plane, the stack`);
  process.kill(state.pid, "SIGTERM");
  for (let i = 0; i < 240 && alive(state.pid); i++) await new Promise((r) => setTimeout(r, 500));
  if (alive(state.pid)) {
    console.error(`pid ${state.pid} is still running after 120 s; kill it: kill ${state.pid}`);
    return 1;
  }
  console.log("down");
  return 0;
}

/** Runs a pulumi command, its output shown as it comes; throws unless it exits 0. */
async function pulumi(ws: PulumiWorkspace, args: string[]): Promise<string> {
  let lineStart = true;
  const r = await ws.runAsync(args, {
    timeoutMs: 1_800_000,
    // Indented, line by line (the CLI prints progress dots without newlines).
    echo: (chunk) => {
      let out = "";
      for (const ch of chunk) {
        if (lineStart) out += "    │ ";
        out += ch;
        lineStart = ch === "\n";
      }
      process.stdout.write(out);
    },
  });
  if (r.code !== 0) throw new Error(`pulumi ${args.join(" ")} exited ${r.code}`);
  return r.output;
}

async function up(): Promise<number> {
  const running = readState();
  if (running && alive(running.pid)) {
    console.error(`a demo is already running (pid ${running.pid}); npm run demo -- --down first`);
    return 1;
  }
  let bins: ReturnType<typeof requireJourneyBinaries>;
  try {
    bins = requireJourneyBinaries();
  } catch (e) {
    console.error(`npm run demo needs binaries this machine has not built yet:\n${(e as Error).message}`);
    return 1;
  }
  fs.rmSync(STATE_DIR, { recursive: true, force: true });
  fs.mkdirSync(STATE_DIR, { recursive: true });
  fs.writeFileSync(STATE_FILE, JSON.stringify({ pid: process.pid } satisfies DemoState));
  log(`load average ${load()} (${os.cpus().length} cores)`);

  let cluster: Cluster | undefined;
  let ws: PulumiWorkspace | undefined;
  let stopping = false;
  const teardown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    log("tearing down: the node, the control plane, the stack's state");
    await cluster?.stop();
    ws?.cleanup();
    fs.rmSync(STATE_DIR, { recursive: true, force: true });
    process.exit(code);
  };
  process.on("SIGINT", () => void teardown(130));
  process.on("SIGTERM", () => void teardown(0));

  const kubeconfig = path.join(STATE_DIR, "kubeconfig");
  try {
    const images = await step("images (build or cache)", () => journeyImages(bins.cluster, log));
    cluster = await step("cluster: control plane, node booted, images imported, Node Ready", () =>
      startJourneyCluster(images),
    );
    log(`cluster timings (ms from its start): ${JSON.stringify(cluster.timings)}`);
    fs.copyFileSync(cluster.cp.kubeconfigPath, kubeconfig);
    fs.chmodSync(kubeconfig, 0o600);
    const c = cluster;
    ws = quickstartStack(STATE_DIR, c, bins.kubernetesPlugin, kubeconfig);
    const w = ws;
    fs.writeFileSync(
      STATE_FILE,
      JSON.stringify({ pid: process.pid, kubeconfig, workspace: w.dir } satisfies DemoState),
    );
    const envFile = path.join(STATE_DIR, "env.sh");
    fs.writeFileSync(
      envFile,
      Object.entries(w.environment())
        .map(([k, v]) => `export ${k}=${JSON.stringify(v)}\n`)
        .join("") + `cd ${JSON.stringify(w.project)}\n`,
      { mode: 0o600 },
    );
    await step("pulumi preview (examples/quickstart)", () => pulumi(w, ["preview"]));
    await step("pulumi up", () => pulumi(w, ["up", "--yes", "--skip-preview"]));
    const claim = await step("PVC on lvms-thin + a pod writing to it → Succeeded, PVC Bound", () =>
      writeToNewClaim(c),
    );
    log(`PVC default/demo-data ${claim.pvc.status.phase}, volume ${claim.pv.metadata.name}`);
    log(`the pod's output:\n${claim.log.replace(/^/gm, "    │ ")}`);
    const lvm = await nodeLvm(c);
    log(`on the node (its own lvm):\n${[lvm.pvs, lvm.vgs, lvm.lvs].join("").replace(/^/gm, "    │ ")}`);
    log(`timings (s): ${timings.map(([n, s]) => `${n}: ${s.toFixed(1)}`).join("; ")}`);
    log(`to the bound PVC: ${((Date.now() - t0) / 1000).toFixed(1)} s; load average ${load()}`);
  } catch (e) {
    log(`FAILED: ${(e as Error).message}`);
    if (!cluster) {
      await teardown(1);
      return 1;
    }
    log(`pods:\n${(await podSummary(cluster).catch((x: Error) => x.message)).replace(/^/gm, "    │ ")}`);
    log("the cluster stays up for inspection (same commands as below)");
  }
  console.log(
    [
      "",
      "The cluster is up while this process runs.",
      `  export KUBECONFIG=${kubeconfig}`,
      `  source ${path.join(STATE_DIR, "env.sh")}   # then: pulumi stack, pulumi preview, ...`,
      "  npm run demo -- --down                      # or Ctrl-C here: tears it all down",
      "",
    ].join("\n"),
  );
  setInterval(() => undefined, 1 << 30); // keep running (the cluster's processes do too)
  await new Promise<never>(() => undefined);
  return 0;
}

const args = process.argv.slice(2);
const unknown = args.filter((a) => a !== "--down");
if (unknown.length) {
  console.error(`usage: npm run demo [-- --down]   (unknown: ${unknown.join(" ")})`);
  process.exit(2);
}
(args.includes("--down") ? down() : up()).then(
  (code) => process.exit(code),
  (e: Error) => {
    console.error(e.stack ?? e.message);
    process.exit(1);
  },
);
