/**
 * deviceDiscoveryPolicy Static against a real kube-apiserver and a REAL agent on loop devices: once
 * the group is built, a device that appears later on the node is never claimed, the LVMNode says why,
 * and nothing waits for an approval (there is nothing to approve). The same hot-plug under Dynamic
 * (the default) is approval.test.ts's: a plan that waits.
 *
 *   npx jest test/operator/static-discovery --runInBand
 */
import { randomBytes } from "node:crypto";
import { commandLog } from "../agent/command-log-reader";
import type { Json } from "../env/cluster";
import { startAgentCluster, type AgentCluster } from "./agent-cluster";
import { eventually, must, setsPath, sleep } from "./env";
import { lvmNodeWaits } from "./lvmnode-waits";

jest.setTimeout(180_000);

const NS = "storage";
const RESYNC_MS = 2000;
const VG = `sta-${randomBytes(3).toString("hex")}`;
let c: AgentCluster;

beforeAll(async () => {
  c = await startAgentCluster({
    nodes: ["n1"],
    devices: 1,
    namespaces: [NS],
    resyncMs: RESYNC_MS,
    plainHttp: true,
  });
}, 120_000);
afterAll(async () => c?.stop());

const n1 = () => lvmNodeWaits(c, NS, "n1");
/** Every command the agent ran that names `device` and is not a read. */
const writesTo = (device: string) =>
  commandLog(c.scratch.n1!.path("commands.jsonl")).filter(
    (x) =>
      x.requested.includes(device) &&
      !["pvs", "vgs", "lvs", "blkid", "lsblk", "wipefs"].includes(x.tool) &&
      !x.requested.includes("--no-act"),
  );

test("a device that appears after a Static group was built is never claimed, and the LVMNode says why", async () => {
  await must(c.cp, "POST", setsPath(NS), {
    apiVersion: "lvm.topolvm.io/v2alpha1",
    kind: "LVMNodeSet",
    metadata: { name: "static", namespace: NS },
    spec: {
      template: {
        volumeGroups: [
          {
            name: VG,
            minDeviceSize: "64Mi",
            deviceDiscoveryPolicy: "Static",
            deviceSelector: {
              deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "Any" }] }],
            },
          },
        ],
      },
    },
  });
  const s = c.scratch.n1!;
  const [first] = s.loops;
  await n1().readyWith(1);

  // Hot-plug: a blank device appears on the node (the agent restarts seeing it). Under Dynamic a
  // blank device matching the selector would be claimed (held for approval by the default policy).
  const extra = s.loop(128);
  await c.restartAgent("n1");

  const shown = await eventually(
    "the new device reported excluded",
    async () => {
      const n = await n1().read();
      const excluded = n.status?.volumeGroups?.[0]?.devices?.excluded ?? [];
      return excluded.some((x: Json) => x.kname === extra) ? n : undefined;
    },
    60_000,
    200,
  );
  const group = shown.status.volumeGroups[0];
  expect(group.devices.excluded).toEqual([
    { kname: extra, reasons: [`${extra} appeared after the group was built; discovery is Static`] },
  ]);
  expect(group.devices.included.map((d: Json) => d.kname)).toEqual([first]);

  // Three resyncs later: still not claimed, nothing written to it, nothing waiting, still Ready.
  await sleep(3 * RESYNC_MS + 500);
  const later = await n1().read();
  expect(later.status.state).toBe("Ready");
  expect(later.status.pendingApproval).toBeUndefined();
  expect(later.status.volumeGroups[0].devices.included).toHaveLength(1);
  expect(writesTo(extra)).toEqual([]);
});
