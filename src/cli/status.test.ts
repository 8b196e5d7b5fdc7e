import { capturedIO, runCaptured } from "../../test/support/cli/captured-io";
import type { KubePaths } from "../kube/client";
import { run } from "./status";
import type { StatusView } from "./status-view";

const T = "2026-12-07T00:00:00Z";
const cond = (type: string, status: string, reason: string, message?: string) => ({
  type,
  status,
  reason,
  lastTransitionTime: T,
  ...(message ? { message } : {}),
});
const SET = {
  apiVersion: "lvm.topolvm.io/v2alpha1",
  kind: "LVMNodeSet",
  metadata: { name: "edge", namespace: "lvm-system", uid: "uid-edge" },
  spec: { template: { volumeGroups: [], deviceClasses: [] } },
  status: {
    state: "Ready",
    desiredNodes: 2,
    readyNodes: 1,
    rollout: { templateGeneration: 4, updatedNodes: 2, totalNodes: 2 },
    conditions: [cond("Ready", "False", "NodesNotReady", "1 of 2 nodes not Ready")],
  },
};
const owned = {
  ownerReferences: [
    {
      apiVersion: "lvm.topolvm.io/v2alpha1",
      kind: "LVMNodeSet",
      name: "edge",
      uid: "uid-edge",
      controller: true,
    },
  ],
};
const group = {
  name: "vg-data",
  state: "Healthy",
  size: "30Gi",
  free: "2Gi",
  devices: { included: [{ kname: "/dev/vdb" }, { kname: "/dev/vdc" }] },
  volumes: [{ name: "pool0", size: "27Gi", dataPercent: "81.20", metadataPercent: "3.10" }],
};
const node = (name: string, status: object) => ({
  apiVersion: "lvm.topolvm.io/v2alpha1",
  kind: "LVMNode",
  metadata: { name, namespace: "lvm-system", ...owned },
  spec: { nodeName: name },
  status,
});
const N1 = node("n1", {
  state: "Ready",
  volumeGroups: [group],
  conditions: [
    cond("Ready", "True", "Ready"),
    cond(
      "ThinPoolNearlyFull",
      "True",
      "AboveWarning",
      "vg-data/pool0 data 81.20% metadata 3.10% (warning); thresholds 75% and 85%",
    ),
  ],
});
const N2 = node("n2", {
  state: "Progressing",
  volumeGroups: [{ ...group, volumes: [] }],
  pendingApproval: { hash: "a".repeat(64), policy: "Destructive", since: T, steps: [], claims: [] },
  conditions: [
    cond("Ready", "False", "AwaitingApproval"),
    cond("AwaitingApproval", "True", "ApprovalRequired", "a wipe waits"),
  ],
});

function cluster(sets: object[], nodes: object[]): KubePaths & { paths: string[] } {
  const paths: string[] = [];
  return {
    paths,
    async getPath(path: string) {
      paths.push(path);
      return { items: path.includes("/lvmnodesets") ? sets : nodes };
    },
    postPath: async () => {
      throw new Error("status writes nothing");
    },
  };
}

const cli = (argv: string[], kube: KubePaths) => runCaptured((io) => run(io, kube as never), argv);

test("text: the set with its rollout, each node's groups and pools, the waiting plan, and what needs a look (exit 3)", async () => {
  const r = await cli([], cluster([SET], [N1, N2]));
  expect(r.code).toBe(3);
  expect(r.stdout).toMatch(/lvm-system\/edge\s+Ready\s+1\/2\s+2\/2 \(generation 4\)/);
  expect(r.stdout).toMatch(
    /n1\s+edge\s+Ready\s+vg-data Healthy 30Gi \(free 2Gi, 2 PV\)\s+vg-data\/pool0 27Gi data 81.20% meta 3.10%\s+-/,
  );
  expect(r.stdout).toMatch(/n2\s+edge\s+Progressing\s+.*aaaaaaaaaaaa\n/);
  expect(r.stdout).toContain("node n1: ThinPoolNearlyFull True (AboveWarning): vg-data/pool0 data 81.20%");
  expect(r.stdout).toContain("node n2: AwaitingApproval True (ApprovalRequired): a wipe waits");
  expect(r.stdout).toContain("LVMNodeSet lvm-system/edge: Ready False (NodesNotReady)");
});

test("all Ready and nothing waiting: exit 0, no 'needs a look'; a node of no listed set is still shown", async () => {
  const well = {
    ...SET,
    status: { ...SET.status, readyNodes: 2, conditions: [cond("Ready", "True", "Ready")] },
  };
  const n1 = node("n1", {
    state: "Ready",
    volumeGroups: [group],
    conditions: [cond("Ready", "True", "Ready")],
  });
  const orphan = { ...n1, metadata: { name: "n9", namespace: "lvm-system" } };
  const r = await cli(["-o", "wide"], cluster([well], [n1, orphan]));
  expect(r).toMatchObject({ code: 0, stderr: "" });
  expect(r.stdout).not.toContain("needs a look");
  expect(r.stdout).toMatch(/n9\s+-\s+Ready/);
});

test("json: the documented shape; --node and --namespace narrow it (the namespace in the request)", async () => {
  const kube = cluster([SET], [N1, N2]);
  const r = await cli(["-o", "json", "--node", "n2", "--namespace", "lvm-system"], kube);
  const view = JSON.parse(r.stdout) as StatusView & { apiVersion: string };
  expect(view.apiVersion).toBe("pulumi-lvm.dev/status/v1");
  expect(view.nodeSets[0]!.nodes.map((n) => n.node)).toEqual(["n2"]);
  expect(view.nodeSets[0]!.nodes[0]).toMatchObject({
    pendingApproval: "a".repeat(64),
    volumeGroups: [{ name: "vg-data", physicalVolumes: 2 }],
  });
  expect(kube.paths).toEqual([
    "/apis/lvm.topolvm.io/v2alpha1/namespaces/lvm-system/lvmnodesets",
    "/apis/lvm.topolvm.io/v2alpha1/namespaces/lvm-system/lvmnodes",
  ]);
});

test("an unknown --nodeset, or a cluster that cannot be read: exit 1 with the reason; bad flags: exit 2", async () => {
  expect(await cli(["--nodeset", "nope"], cluster([SET], []))).toMatchObject({
    code: 1,
    stderr: expect.stringContaining("no LVMNodeSet named nope in any namespace"),
  });
  const down: KubePaths = {
    getPath: async () => {
      throw new Error("connect ECONNREFUSED 127.0.0.1:6443");
    },
    postPath: async () => undefined,
  };
  expect(await cli([], down)).toMatchObject({ code: 1, stderr: expect.stringContaining("ECONNREFUSED") });
  expect((await cli(["--frobnicate"], down)).code).toBe(2);
  expect((await cli(["-o", "xml"], down)).code).toBe(2);
});

test("--html FILE writes the page of what it printed (--node narrows both), before the table", async () => {
  const r = await cli(["--html", "status.html", "--node", "n2"], cluster([SET], [N1, N2]));
  expect(r.code).toBe(3);
  expect(r.stderr).toBe(
    "pulumi-lvm status: wrote status.html (1 node; open it in a browser, it loads nothing)\n",
  );
  const page = r.written?.["status.html"] ?? "";
  expect(page).toMatch(/^<!doctype html>/);
  expect(page).toContain('data-name="n2"');
  expect(page).not.toContain('data-name="n1"');
  expect(page).toContain('class="c s-claimed k0" data-c="0" title="/dev/vdb: claimed');
});

test("--html FILE that cannot be written: exit 1, the file and why on stderr, nothing on stdout", async () => {
  const { io, out } = capturedIO(["--html", "/nope/status.html"]);
  const failing = {
    ...io,
    writeFile: async () => {
      throw new Error("ENOENT: no such file or directory, open '/nope/status.html'");
    },
  };
  expect(await run(failing, cluster([SET], [N1]) as never)).toBe(1);
  expect(out).toMatchObject({
    stdout: "",
    stderr:
      "pulumi-lvm status: --html /nope/status.html: ENOENT: no such file or directory, open '/nope/status.html'\n",
  });
});
