/**
 * The host half of the lifecycle table in test/conformance/cases.ts (the other half is test/vm/conformance.test.ts, with
 * the agent inside a qemu guest): the same cases, driven the same way (the provider's own client:
 * plan, then apply with the plan's hash), on this machine's kernel with loop devices selected by path.
 * The host has no device-mapper, so the data class is Thick here and nothing is moved by pvmove; the
 * thin pool steps of the table run only in the guest. Results are checked with lvm run by the test,
 * restricted to its own loop devices (test/agent/harness.ts: backing files under
 * /var/tmp/agent-tests/, volume groups agt-*).
 *
 * It lives next to the table rather than in test/agent/ because the table is the real-kernel tier's
 * contract; it needs root and loop devices, like the rest of the host tier, and takes a few seconds.
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import { lvm, requireHostTier, Scratch, startAgent, writeTokenFile, type AgentProcess } from "./harness";
import {
  LIFECYCLE,
  runLifecycleCase,
  runTeardownCases,
  type AgentTier,
  type DiskLabel,
  type LvmRow,
} from "../conformance/cases";

jest.setTimeout(120_000);

const suffix = randomBytes(3).toString("hex");
let scratch: Scratch;
let agent: AgentProcess | undefined;
let token = "";
const disks: Partial<Record<DiskLabel, string>> = {};
const all = () => Object.values(disks) as string[];

const tier: AgentTier = {
  name: "host",
  thin: false,
  dataVg: `agt-tbl-${suffix}-data`,
  fastVg: `agt-tbl-${suffix}-fast`,
  select: (labels) => ({ key: "path", operator: "In", values: labels.map((l) => tier.path(l)) }),
  path(label) {
    const p = disks[label];
    if (!p) throw new Error(`no loop device for disk ${label}`);
    return p;
  },
  async report(cmd, fields, ...flags) {
    const out = lvm(all(), [
      cmd,
      ...flags,
      "--reportformat",
      "json",
      "--units",
      "b",
      "--nosuffix",
      "-o",
      fields,
    ]);
    const key = cmd.slice(0, 2);
    return (JSON.parse(out) as { report: Array<Record<string, LvmRow[]>> }).report[0]?.[key] ?? [];
  },
  async readLvmd() {
    const file = scratch.path("lvmd.yaml");
    return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined;
  },
  get endpoint() {
    if (!agent) throw new Error("the agent did not start (see the beforeAll error)");
    return { node: "node-tbl", url: agent.url, token };
  },
};

beforeAll(async () => {
  requireHostTier();
  scratch = new Scratch("table");
  for (const label of ["d0", "d1", "d2", "f"] as const) disks[label] = scratch.loop();
  token = writeTokenFile(scratch.path("tokens"), { op: { user: "operator", node: "node-tbl" } }).op!;
  agent = await startAgent({
    node: "node-tbl",
    devices: all(),
    ...scratch.agentFiles(),
    auth: { tokenFile: scratch.path("tokens") },
  });
});

afterAll(async () => {
  await agent?.stop();
  scratch?.cleanup();
});

describe("the agent lifecycle table on the host (loop devices, Thick classes)", () => {
  test.each(LIFECYCLE.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    await runLifecycleCase(tier, c);
  });

  test("teardown: refused (409, the volume listed) while a user volume exists; with force: groups and PV labels gone", async () => {
    // a Thick volume as TopoLVM would make it, as metadata only: this kernel has no device-mapper
    lvm(all(), [
      "lvcreate",
      "--driverloaded",
      "n",
      "--activate",
      "n",
      "--zero",
      "n",
      "-L",
      "8m",
      "-n",
      "user-vol",
      tier.fastVg,
    ]);
    await runTeardownCases(tier, ["d1", "d2"], [{ vg: tier.fastVg, name: "user-vol" }]);
  });
});
