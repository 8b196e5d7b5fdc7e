import { LVM_NODE_SETS, LVM_NODES, NODES } from "../../kube/resources";
import { ListingKube } from "../../../test/support/kube/listing-kube";
import { flush, ManualClock } from "../../../test/support/kube/manual-clock";
import { AdmissionCache } from "./reads";

const LVS = "/apis/topolvm.io/v1/logicalvolumes";
let kube: ListingKube;
let clock: ManualClock;
let stop: AbortController;

beforeEach(() => {
  kube = new ListingKube();
  clock = new ManualClock();
  stop = new AbortController();
  kube.lists.set(LVM_NODE_SETS.plural, [
    { metadata: { name: "fast", namespace: "storage" } },
    { metadata: { name: "other", namespace: "elsewhere" } },
  ]);
  kube.lists.set(LVM_NODES.plural, [{ metadata: { name: "n1", namespace: "storage" } }]);
  kube.lists.set(NODES.plural, [
    {
      metadata: { name: "n1", uid: "u", resourceVersion: "7", labels: { role: "storage" } },
      status: { images: [{ names: ["x".repeat(10_000)] }] },
    } as never,
  ]);
});
afterEach(() => stop.abort());

test("before its informers are filled a read fails, saying so; then reads are served from memory", async () => {
  const cache = new AdmissionCache({ kube, clock, namespace: "storage" });
  await expect(cache.reads.nodeSets()).rejects.toThrow(
    "the webhook's caches are not filled yet (the operator is starting); try again",
  );
  void cache.run(stop.signal);
  await flush();
  expect(cache.synced).toBe(true);
  const before = kube.reads.length;
  // Its namespace only; a Node as labels and identity, nothing else of it kept.
  expect((await cache.reads.nodeSets()).map((s) => s.metadata.name)).toEqual(["fast"]);
  expect(await cache.reads.nodeSet("storage", "fast")).toBeDefined();
  expect(await cache.reads.nodeSet("elsewhere", "other")).toBeUndefined();
  expect(await cache.reads.nodes()).toEqual([
    { metadata: { name: "n1", uid: "u", resourceVersion: "7", labels: { role: "storage" } } },
  ]);
  expect((await cache.reads.lvmNodes("storage")).map((n) => n.metadata.name)).toEqual(["n1"]);
  expect(kube.reads.slice(before)).toEqual([]);
  // A change the watch brings is seen by the next review.
  kube.send(LVM_NODE_SETS.plural, {
    type: "ADDED",
    object: { metadata: { name: "new", namespace: "storage", resourceVersion: "2" } },
  });
  expect((await cache.reads.nodeSets()).map((s) => s.metadata.name)).toEqual(["fast", "new"]);
});

test("LogicalVolumes: one watch-cache list shared by the reviews waiting, reused for a second; absent API: undefined", async () => {
  const cache = new AdmissionCache({ kube, clock });
  kube.paths.set(LVS, { items: [{ metadata: { name: "pvc-1" } }] });
  const lists = await Promise.all(Array.from({ length: 50 }, () => cache.reads.logicalVolumes()));
  expect(lists.every((l) => l?.[0]?.metadata.name === "pvc-1")).toBe(true);
  expect(kube.reads).toEqual([`GET ${LVS}?resourceVersion=0`]);
  await clock.advance(999);
  await cache.reads.logicalVolumes();
  expect(kube.reads).toHaveLength(1);
  await clock.advance(1);
  kube.paths.delete(LVS);
  expect(await cache.reads.logicalVolumes()).toBeUndefined();
  expect(kube.reads).toHaveLength(2);
  // PersistentVolumes the same way, by name.
  kube.paths.set("/api/v1/persistentvolumes/pvc-1", { metadata: { name: "pvc-1" } });
  await Promise.all([cache.reads.persistentVolume("pvc-1"), cache.reads.persistentVolume("pvc-1")]);
  expect(await cache.reads.persistentVolume("gone")).toBeUndefined();
  expect(kube.reads.slice(2)).toEqual([
    "GET /api/v1/persistentvolumes/pvc-1?resourceVersion=0",
    "GET /api/v1/persistentvolumes/gone?resourceVersion=0",
  ]);
});
