/**
 * The node agent as users run it: LvmSystem's DaemonSet (lvm-system.ts renders it with LvmSystem's
 * own functions) from the product image (`npm run image`), scheduled by the real scheduler and run
 * by the real kubelet + containerd on the guest node, privileged with the host PID namespace and the
 * host paths LvmSystem gives it. The provider's client plans and applies an LVMNode spec through it
 * (a thick VG on one virtio disk, a thin pool's VG on another); the guest's own `vgs`/`lvs` check
 * what it did, and the disk the spec does not select is untouched.
 *
 *   npm run test:cluster -- test/cluster/agent.test.ts
 */
import * as fs from "node:fs";
import { defaultArchive } from "../../deploy/image/build";
import { agentClient, type AgentEndpoint } from "../../src/agent-client/agent-client";
import type { LVMNodeSpec } from "../../src/api";
import { requireClusterBinaries } from "./binaries";
import { Cluster, startCluster } from "./cluster";
import { PAUSE_IMAGE, pauseImage } from "./images";
import { agentEndpoint, agentObjects, installAgent } from "./lvm-system";

const GiB = 1024 ** 3;
const NODE_PORT = 30080;
const LVM_ENV = { LC_ALL: "C", LVM_SUPPRESS_FD_WARNINGS: "1" };
const DISKS = [
  { sizeBytes: 2 * GiB, serial: "SN-AGENT-THICK" },
  { sizeBytes: 2 * GiB, serial: "SN-AGENT-THIN" },
  { sizeBytes: 1 * GiB, serial: "SN-AGENT-SPARE" },
];
const selector = (serial: string) => ({
  deviceSelectorTerms: [{ matchExpressions: [{ key: "serial", operator: "In", values: [serial] }] }],
});
const SPEC = {
  volumeGroups: [
    { name: "pa-thick", deviceSelector: selector("SN-AGENT-THICK"), minDeviceSize: "64Mi" },
    { name: "pa-thin", deviceSelector: selector("SN-AGENT-THIN"), minDeviceSize: "64Mi" },
  ],
  deviceClasses: [
    { name: "thick", strategy: "Thick", volumeGroup: "pa-thick" },
    {
      name: "thin",
      strategy: "Thin",
      volumeGroup: "pa-thin",
      thin: { poolName: "pool", sizePercent: 80, overprovisionRatio: 5 },
    },
  ],
} as unknown as LVMNodeSpec;

jest.setTimeout(900_000);
let cluster: Cluster | undefined;
let endpoint: AgentEndpoint | undefined;
const timings: Record<string, number> = {};

beforeAll(async () => {
  const bins = requireClusterBinaries();
  const archive = defaultArchive();
  if (!fs.existsSync(archive)) throw new Error(`no product image at ${archive}: run npm run image`);
  cluster = await startCluster({
    disks: DISKS,
    images: [await pauseImage(bins), archive],
    sandboxImage: PAUSE_IMAGE,
    forwardPorts: [NODE_PORT],
  });
}, 900_000);

afterAll(async () => {
  console.log(`agent tier timings (ms): ${JSON.stringify({ ...timings, ...cluster?.timings })}`);
  await cluster?.stop();
}, 180_000);

function c(): Cluster {
  if (!cluster) throw new Error("the cluster did not start (see the beforeAll error)");
  return cluster;
}

async function guestLvm(args: string[]): Promise<string> {
  return c().guest.run(["lvm", ...args], { env: LVM_ENV });
}

test("the agent DaemonSet's pod runs on the node from our image, privileged in the host PID namespace", async () => {
  const t0 = Date.now();
  const install = await installAgent(c().cp, {
    name: "pl",
    node: c().nodeName,
    why: () => c().nodeLogs(30),
  });
  timings.daemonSetToReady = Date.now() - t0;
  const rendered = agentObjects("pl", { agentImagePullPolicy: "Never" }).objects.find(
    (o) => o.kind === "DaemonSet",
  )!;
  const want = rendered.spec.template.spec;
  const pod = install.pod;
  expect(pod.spec.hostPID).toBe(true);
  expect(pod.spec.containers[0].securityContext).toEqual(want.containers[0].securityContext);
  expect(pod.spec.containers[0].args).toEqual(want.containers[0].args);
  expect(pod.status.containerStatuses[0]).toMatchObject({
    ready: true,
    image: expect.stringContaining("localhost/pulumi-lvm:"),
  });
  endpoint = await agentEndpoint(c().cp, c().guest, install, c().nodeName, NODE_PORT);
});

test("plans and applies an LVMNode spec on the guest's virtio disks, checked with the guest's own lvm", async () => {
  if (!endpoint) throw new Error("no agent endpoint (the previous test failed)");
  const client = agentClient();
  const t0 = Date.now();
  const plan = await client.plan(endpoint, SPEC);
  timings.plan = Date.now() - t0;
  expect(plan.blocked).toEqual([]);
  expect(plan.actions.map((a) => a.op)).toEqual(expect.arrayContaining(["pvcreate", "vgcreate"]));
  const t1 = Date.now();
  await client.apply(endpoint, SPEC, plan.hash);
  timings.apply = Date.now() - t1;

  const vgs = (await guestLvm(["vgs", "--noheadings", "-o", "vg_name,pv_count"]))
    .trim()
    .split("\n")
    .map((l) => l.trim().split(/\s+/));
  expect(vgs).toEqual(
    expect.arrayContaining([
      ["pa-thick", "1"],
      ["pa-thin", "1"],
    ]),
  );
  const pvs = await guestLvm(["pvs", "--noheadings", "-o", "pv_name,vg_name"]);
  const deviceOf = async (serial: string) =>
    (
      await c().guest.run([
        "sh",
        "-c",
        `for s in /sys/block/*/serial; do [ "$(cat "$s")" = "${serial}" ] && echo "/dev/$(basename "$(dirname "$s")")"; done; true`,
      ])
    ).trim();
  const serialOf = async (dev: string) =>
    (await c().guest.run(["cat", `/sys/block/${dev.replace("/dev/", "")}/serial`])).trim();
  for (const line of pvs.trim().split("\n")) {
    const [pv, vg] = line.trim().split(/\s+/);
    if (!vg?.startsWith("pa-")) continue;
    expect(await serialOf(pv!)).toBe(vg === "pa-thick" ? "SN-AGENT-THICK" : "SN-AGENT-THIN");
  }
  const pool = (await guestLvm(["lvs", "--noheadings", "-o", "lv_name,lv_attr", "pa-thin"])).trim();
  expect(pool).toMatch(/^pool\s+twi/);
  // The agent wrote lvmd's device classes on the host path LvmSystem mounts.
  const lvmd = await c().guest.run(["cat", "/etc/topolvm/lvmd.yaml"]);
  expect(lvmd).toContain("pa-thin");

  // Only the selected disks were touched: the spare one has no PV.
  expect(pvs).not.toMatch(new RegExp(`${await deviceOf("SN-AGENT-SPARE")}\\s`));
  // Planned again, the same spec needs nothing more.
  expect((await client.plan(endpoint, SPEC)).actions).toEqual([]);
});
