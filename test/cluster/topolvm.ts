/**
 * TopoLVM installed into the cluster tier the way users install it: the TopoLVM Helm chart (the
 * pinned snapshot in ../shared/sources, rendered by a helm binary built from source) with the values
 * LvmSystem derives (checkTopolvmArgs → planTopolvm: the same code path as the component), the
 * StorageClasses and VolumeSnapshotClasses our DeviceClass component creates (storageClassManifest,
 * snapshotClassManifest), and the snapshot controller with its CRDs from external-snapshotter's own
 * manifests. Only the image references (imported locally, images.ts) and one controller replica
 * (a single node) are the test's.
 *
 * The chart is test/env/topolvm-chart.ts's prepared copy of the pinned snapshot.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { parseAllDocuments } from "yaml";
import type { LVMNodeSpec } from "../../src/api";
import { snapshotClassManifest, storageClassManifest } from "../../src/components/device-class";
import { checkTopolvmArgs, type TopolvmSettings } from "../../src/components/topolvm-args";
import type { ControlPlane, Json } from "../env/cluster";
import { CHART_VERSION, chartDir } from "../env/topolvm-chart";
import { cacheDir } from "../vm/guest";
import type { ClusterBinaries } from "./binaries";
import { pin } from "./binaries";
import { SNAPSHOT_CONTROLLER_IMAGE, TOPOLVM_REPOSITORY } from "./images";
import { apply, get, waitFor } from "./objects";

export interface TopolvmInstall {
  readonly namespace: string;
  readonly values: Record<string, unknown>;
  /** Every object applied, in order. */
  readonly objects: readonly Json[];
}

/**
 * TopoLVM's chart values for a node under TCG (this tier's qemu guest, no KVM), for every cluster
 * test and the journey (test/journey passes them as the quickstart's `topolvmValues` config).
 */
export const UNDER_TCG_VALUES = {
  // One node: the chart's two controller replicas have a required anti-affinity. One replica
  // needs no leader election (the chart's non-HA mode, with Recreate): under TCG the controller
  // and its sidecars missed their lease renewals and exited, 2–3 restarts each in one run, and
  // PVC expansions waited on a resizer that kept restarting.
  controller: {
    replicaCount: 1,
    leaderElection: { enabled: false },
    updateStrategy: { type: "Recreate" },
  },
  // The guest runs under TCG (no KVM): starting a process in a container takes seconds and a
  // container's start a minute or more at load 10+, so the chart's probes (3 s timeout, 10 s
  // initial delay) killed lvmd ("/lvmd health" timed out after 3s) and topolvm-node (its
  // livenessprobe sidecar not yet listening) while they were starting. Real CPUs need none of this.
  livenessProbe: Object.fromEntries(
    ["topolvm_node", "csi_registrar", "topolvm_controller", "lvmd", "topolvm_scheduler"].map((c) => [
      c,
      { timeoutSeconds: 30, initialDelaySeconds: 180, periodSeconds: 60 },
    ]),
  ),
} as const;

/** LvmSystem's `topolvm` argument for one node set (its LVMNode template), with our images. */
export function topolvmSettings(nodeSet: string, template: LVMNodeSpec): TopolvmSettings {
  return {
    chartVersion: CHART_VERSION,
    nodeSets: [{ name: nodeSet, template }],
    values: {
      ...UNDER_TCG_VALUES,
      // The test's other change: locally imported images, never pulled.
      image: {
        repository: TOPOLVM_REPOSITORY,
        reference: pin("TOPOLVM_VERSION").replace(/^v/, ""),
        pullPolicy: "Never",
      },
    },
  } as never;
}

/** The chart values LvmSystem derives for one node set, plus our images. */
export function lvmSystemValues(nodeSet: string, template: LVMNodeSpec): Record<string, unknown> {
  const check = checkTopolvmArgs(topolvmSettings(nodeSet, template), {});
  if (!check.plan) throw new Error(`LvmSystem's TopoLVM values: ${JSON.stringify(check.problems)}`);
  return check.plan.values;
}

export function renderChart(
  bins: ClusterBinaries,
  namespace: string,
  values: Record<string, unknown>,
): Json[] {
  const dir = fs.mkdtempSync(path.join(cacheDir(), "cluster", "helm-"));
  try {
    fs.writeFileSync(path.join(dir, "values.json"), JSON.stringify(values));
    const out = execFileSync(
      bins.helm,
      [
        "template",
        "topolvm",
        chartDir(),
        "--namespace",
        namespace,
        "--values",
        path.join(dir, "values.json"),
      ],
      {
        encoding: "utf8",
        env: { ...process.env, HELM_CACHE_HOME: dir, HELM_CONFIG_HOME: dir, HELM_DATA_HOME: dir },
      },
    );
    return parseAllDocuments(out)
      .map((d) => d.toJS())
      .filter((o) => o && typeof o === "object" && o.kind);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** external-snapshotter's CRDs and its snapshot-controller manifests, with our image, one replica. */
export function snapshotControllerObjects(): Json[] {
  const root = path.join(cacheDir(), "cluster", "external-snapshotter", pin("SNAPSHOTTER_VERSION"));
  const docs = (file: string) =>
    parseAllDocuments(fs.readFileSync(file, "utf8"))
      .map((d) => d.toJS())
      .filter((o) => o && typeof o === "object" && o.kind);
  const crds = fs
    .readdirSync(path.join(root, "crd"))
    .sort()
    .flatMap((f) => docs(path.join(root, "crd", f)));
  const deploy = ["rbac-snapshot-controller.yaml", "setup-snapshot-controller.yaml"].flatMap((f) =>
    docs(path.join(root, "deploy", f)),
  );
  for (const o of deploy) {
    if (o.kind !== "Deployment") continue;
    o.spec.replicas = 1;
    o.spec.minReadySeconds = 0;
    for (const c of o.spec.template.spec.containers) {
      c.image = SNAPSHOT_CONTROLLER_IMAGE;
      c.imagePullPolicy = "Never";
      c.args = ["--v=2", "--leader-election=false"];
    }
  }
  return [...crds, ...deploy];
}

/**
 * Installs the snapshot controller, TopoLVM's chart and our device classes' storage classes. The
 * namespace is created only when absent: LvmSystem's (lvm-system.ts) carries its labels.
 */
export async function installTopolvm(
  cp: ControlPlane,
  bins: ClusterBinaries,
  opts: { namespace: string; nodeSet: string; template: LVMNodeSpec },
): Promise<TopolvmInstall> {
  const values = lvmSystemValues(opts.nodeSet, opts.template);
  const chart = renderChart(bins, opts.namespace, values);
  // The DeviceClass component's own manifests (it adds apiVersion/kind through its Pulumi resource types).
  const classes = (opts.template.deviceClasses ?? []).flatMap((dc) => {
    const sc = storageClassManifest(dc as never, {});
    const vsc = snapshotClassManifest(dc as never, {});
    return [
      ...(sc ? [{ apiVersion: "storage.k8s.io/v1", kind: "StorageClass", ...sc }] : []),
      ...(vsc ? [vsc] : []),
    ];
  });
  const snapshot = snapshotControllerObjects();
  const crds = [...snapshot, ...chart].filter((o) => o.kind === "CustomResourceDefinition");
  const rest = [...snapshot, ...chart].filter((o) => o.kind !== "CustomResourceDefinition");
  const ns = { apiVersion: "v1", kind: "Namespace", metadata: { name: opts.namespace } };
  const objects = [ns, ...crds, ...rest, ...classes];
  if (!(await get(cp, `/api/v1/namespaces/${opts.namespace}`))) await apply(cp, ns);
  for (const crd of crds) await apply(cp, crd);
  for (const crd of crds) {
    await waitFor(
      `CRD ${crd.metadata.name} established`,
      () => cp.request("GET", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`),
      (r) => !!r.body?.status?.conditions?.some((c: Json) => c.type === "Established" && c.status === "True"),
      60_000,
    );
  }
  for (const o of [...rest, ...classes]) await apply(cp, o);
  return { namespace: opts.namespace, values, objects };
}

/**
 * The snapshot CRDs and the snapshot controller alone (snapshotControllerObjects), CRDs first and
 * Established before the rest: what a cluster provides before TopoLVM is installed by Pulumi (the
 * quickstart's VolumeSnapshotClass needs the CRD; `npm run demo`, test/journey).
 */
export async function installSnapshotController(cp: ControlPlane): Promise<void> {
  const objects = snapshotControllerObjects();
  const crds = objects.filter((o) => o.kind === "CustomResourceDefinition");
  for (const crd of crds) await apply(cp, crd);
  for (const crd of crds) {
    await waitFor(
      `CRD ${crd.metadata.name} established`,
      () => cp.request("GET", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`),
      (r) => !!r.body?.status?.conditions?.some((c: Json) => c.type === "Established" && c.status === "True"),
      60_000,
    );
  }
  for (const o of objects.filter((x) => x.kind !== "CustomResourceDefinition")) await apply(cp, o);
}
