import type { KubeClient, KubeObject } from "../../kube/client";
import { KubeApiError } from "../../kube/errors";
import type { Resource } from "../../kube/resources";
import type { WaitingPlan } from "../agents/pending";
import { withLostClaims } from "./lost-claims";

/** The two reads lost-claims makes: a list of LogicalVolumes, a GET of each PersistentVolume. */
function kube(volumes: KubeObject[] | "no TopoLVM", pvs: KubeObject[]) {
  const requests: string[] = [];
  const client = {
    async list(r: Resource) {
      requests.push(`list ${r.plural}`);
      if (volumes === "no TopoLVM")
        throw new KubeApiError("LIST", "LogicalVolume", 404, "NotFound", "the server could not find it");
      return { items: volumes, metadata: {} };
    },
    async get(r: Resource, _ns: string | undefined, name: string) {
      requests.push(`get ${r.plural}/${name}`);
      return pvs.find((pv) => pv.metadata.name === name);
    },
  } as unknown as KubeClient;
  return { client, requests };
}

const lv = (name: string, node: string, volumeID: string): KubeObject =>
  ({ metadata: { name }, spec: { name, nodeName: node }, status: { volumeID } }) as KubeObject;
const pv = (name: string, namespace: string, claim: string): KubeObject =>
  ({ metadata: { name }, spec: { claimRef: { namespace, name: claim } } }) as KubeObject;

const waiting = (loses?: string[]): WaitingPlan => ({
  node: "n1",
  hash: "h",
  policy: "Automatic",
  held: 1,
  claims: [],
  steps: [
    {
      op: "vgreduce-removemissing",
      command: "vgreduce --removemissing --force vg1",
      volumeGroup: "vg1",
      ...(loses ? { loses } : {}),
    },
  ],
});

describe("withLostClaims: the claims a repair's lost volumes belong to", () => {
  test("each lost volume TopoLVM made on this node names its PVC; others are named alone", async () => {
    const { client, requests } = kube(
      [
        lv("pvc-1", "n1", "lv-a"),
        lv("pvc-2", "n2", "lv-b"),
        lv("pvc-3", "n1", "lv-c"),
        lv("pvc-4", "n1", "kept"),
      ],
      [pv("pvc-1", "shop", "db-0"), pv("pvc-2", "shop", "elsewhere"), pv("pvc-3", "ops", "logs")],
    );
    const named = await withLostClaims(waiting(["vg1/lv-a", "vg1/lv-b", "vg1/lv-c"]), client);
    expect(named.steps[0]!.loses).toEqual([
      "vg1/lv-a (PVC shop/db-0)",
      "vg1/lv-b",
      "vg1/lv-c (PVC ops/logs)",
    ]);
    expect(requests).toEqual([
      "list logicalvolumes",
      "get persistentvolumes/pvc-1",
      "get persistentvolumes/pvc-3",
    ]);
  });

  test("without TopoLVM's API the volumes are named alone", async () => {
    const { client } = kube("no TopoLVM", []);
    expect((await withLostClaims(waiting(["vg1/lv-a"]), client)).steps[0]!.loses).toEqual(["vg1/lv-a"]);
  });

  test("a plan that loses nothing reads nothing", async () => {
    const { client, requests } = kube([], []);
    const w = waiting();
    expect(await withLostClaims(w, client)).toBe(w);
    expect(requests).toEqual([]);
  });
});
