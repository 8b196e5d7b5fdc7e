/**
 * StorageClasses and VolumeSnapshotClasses without Pulumi (issue 17), against the real
 * kube-apiserver, with the operator as the subcommand runs it (startOperator, its service account's
 * RBAC from operatorRules): a set applied as plain YAML gets its classes, named by the API's naming
 * policy; creationPolicy Never and objects that already exist are left alone; a set the NodeSet
 * component made (annotation lvm.topolvm.io/device-class-objects: pulumi) gets none from the
 * operator, so the two never fight over one object; a resync creates nothing again.
 *
 *   npx jest test/operator/classes --runInBand
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { snapshotClassManifest, storageClassManifest } from "../../src/api/class-objects";
import { startOperator, type RunningOperator } from "../../src/operator/main";
import { ControlPlane, Json, startControlPlane } from "../env/cluster";
import { eventually, lvmNodes, must, nodeSet, prepareCluster, setsPath, sleep } from "./env";

jest.setTimeout(60_000);

let cp: ControlPlane;
let op: RunningOperator;
let dir: string;
const NS = "storage";
const SC = "/apis/storage.k8s.io/v1/storageclasses";
const VSC = "/apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses";

/**
 * A stand-in for external-snapshotter's VolumeSnapshotClass CRD (its group, version, kind and
 * scope; the schema left open): the API server stores and serves the objects as the real one does.
 */
const SNAPSHOT_CLASS_CRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: {
    name: "volumesnapshotclasses.snapshot.storage.k8s.io",
    // as upstream's: a *.k8s.io group needs the approval annotation
    annotations: {
      "api-approved.kubernetes.io": "https://github.com/kubernetes-csi/external-snapshotter/pull/814",
    },
  },
  spec: {
    group: "snapshot.storage.k8s.io",
    scope: "Cluster",
    names: {
      kind: "VolumeSnapshotClass",
      listKind: "VolumeSnapshotClassList",
      plural: "volumesnapshotclasses",
      singular: "volumesnapshotclass",
    },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
      },
    ],
  },
};

/** A set with a thin class (default names) and a thick class named explicitly. */
function yamlSet(name: string, roles: string[], classes: Json[]): Json {
  const set = nodeSet(NS, name, roles);
  set.spec.template.deviceClasses = classes;
  return set;
}
const thin = (name: string, extra: Json = {}) => ({
  name,
  strategy: "Thin",
  volumeGroup: "vg1",
  thin: { poolName: `pool-${name}`, sizePercent: 40, overprovisionRatio: 10 },
  ...extra,
});

const get = async (p: string) => {
  const r = await cp.request("GET", p);
  return r.status === 200 ? r.body : undefined;
};

async function createsOf(resource: string): Promise<number> {
  const text = await (await fetch(`${op.url}/metrics`)).text();
  const line = text
    .split("\n")
    .find(
      (l) => l.includes('verb="CREATE"') && l.includes(`resource="${resource}"`) && l.includes('code="201"'),
    );
  return line ? Number(line.split(" ").pop()) : 0;
}

beforeAll(async () => {
  cp = await startControlPlane();
  await prepareCluster(cp);
  await must(cp, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", SNAPSHOT_CLASS_CRD);
  await eventually(
    "the VolumeSnapshotClass CRD is served",
    async () => (await cp.request("GET", VSC)).status === 200,
  );
  await must(cp, "POST", "/api/v1/namespaces", { metadata: { name: NS } });
  await cp.createNode("n1", { role: "storage" });
  await cp.createNode("n2", { role: "pulumi" });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-lvm-classes-"));
  fs.writeFileSync(path.join(dir, "token"), cp.tokens.operator);
  fs.writeFileSync(path.join(dir, "ca.pem"), cp.caPem);
  op = await startOperator({
    argv: [
      ...["--server", cp.url, "--token-file", path.join(dir, "token"), "--ca-file", path.join(dir, "ca.pem")],
      ...["--listen", "127.0.0.1:0", "--agent-token-file", path.join(dir, "token"), "--resync", "2s"],
    ],
    env: {},
    log: () => undefined,
  });
  await eventually("the operator is ready", async () => (await fetch(`${op.url}/readyz`)).status === 200);
}, 120_000);

afterAll(async () => {
  await op?.stop();
  await cp?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("a set applied with plain YAML", () => {
  test("gets its StorageClasses and VolumeSnapshotClass, named by the naming policy, as the DeviceClass component makes them", async () => {
    const classes = [
      thin("fast", { default: true, snapshotClass: { prefix: "snap", deletionPolicy: "Retain" } }),
      {
        name: "bulk",
        strategy: "Thick",
        volumeGroup: "vg1",
        fsType: "ext4",
        storageClass: { namingPolicy: "Explicit", name: "bulk-disks", reclaimPolicy: "Retain" },
      },
      thin("hidden", {
        storageClass: { creationPolicy: "Never" },
        snapshotClass: { creationPolicy: "Never" },
      }),
    ];
    await must(cp, "POST", setsPath(NS), yamlSet("plain", ["storage"], classes));
    const fast = await eventually("StorageClass lvms-fast", () => get(`${SC}/lvms-fast`));
    const bulk = await eventually("StorageClass bulk-disks", () => get(`${SC}/bulk-disks`));
    const snap = await eventually("VolumeSnapshotClass snap-fast", () => get(`${VSC}/snap-fast`));
    const operatorMade = {
      labels: expect.objectContaining({ "app.kubernetes.io/managed-by": "pulumi-lvm-operator" }),
      annotations: { "lvm.topolvm.io/node-set": `${NS}/plain` },
    };
    for (const [made, dc] of [
      [fast, classes[0]],
      [bulk, classes[1]],
    ] as const) {
      const expected = storageClassManifest(dc as never, {})!;
      expect(made).toMatchObject({
        provisioner: "topolvm.io",
        parameters: expected.parameters,
        reclaimPolicy: expected.reclaimPolicy,
        volumeBindingMode: expected.volumeBindingMode,
        allowVolumeExpansion: true,
        metadata: operatorMade,
      });
    }
    expect(bulk.parameters).toEqual({
      "topolvm.io/device-class": "bulk",
      "csi.storage.k8s.io/fstype": "ext4",
    });
    expect(snap).toMatchObject({
      driver: "topolvm.io",
      deletionPolicy: snapshotClassManifest(classes[0] as never, {})!.deletionPolicy,
      metadata: operatorMade,
    });
    expect(snap.deletionPolicy).toBe("Retain");
    // creationPolicy Never, and no snapshot class for a Thick class
    expect(await get(`${SC}/lvms-hidden`)).toBeUndefined();
    expect(await get(`${VSC}/snap-hidden`)).toBeUndefined();
    expect(await get(`${VSC}/lvms-bulk`)).toBeUndefined();
  });

  test("an object of that name that exists already is never changed (CreateIfNotExists)", async () => {
    const mine = await must(cp, "POST", SC, {
      metadata: { name: "lvms-keep", labels: { owner: "someone-else" } },
      provisioner: "example.com/other",
      reclaimPolicy: "Retain",
    });
    await must(cp, "POST", setsPath(NS), yamlSet("keeps", ["nobody"], [thin("keep")]));
    await eventually("VolumeSnapshotClass lvms-keep (the set was reconciled)", () => get(`${VSC}/lvms-keep`));
    await sleep(2500); // a resync more
    const after = await get(`${SC}/lvms-keep`);
    expect(after.metadata.resourceVersion).toBe(mine.metadata.resourceVersion);
    expect(after.provisioner).toBe("example.com/other");
  });

  test("a resync creates nothing again (GET only)", async () => {
    const [sc, vsc] = [await createsOf("storageclasses"), await createsOf("volumesnapshotclasses")];
    expect(sc).toBe(2); // lvms-fast, bulk-disks
    expect(vsc).toBe(2); // snap-fast, lvms-keep
    await sleep(4500); // two resyncs
    expect([await createsOf("storageclasses"), await createsOf("volumesnapshotclasses")]).toEqual([sc, vsc]);
  });
});

describe("a set the NodeSet component made", () => {
  test("gets no class from the operator: its DeviceClass children own them", async () => {
    const set = yamlSet("from-pulumi", ["pulumi"], [thin("pl")]);
    set.metadata.annotations = { "lvm.topolvm.io/device-class-objects": "pulumi" };
    await must(cp, "POST", setsPath(NS), set);
    // The set is reconciled (its LVMNode exists), two resyncs pass: no class appears.
    await eventually("LVMNode n2", async () => (await lvmNodes(cp, NS)).has("n2"));
    await sleep(4500);
    expect(await get(`${SC}/lvms-pl`)).toBeUndefined();
    expect(await get(`${VSC}/lvms-pl`)).toBeUndefined();
  });
});
