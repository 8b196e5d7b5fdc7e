import { ALL_VG_NAMES_ARGV } from "./lvm-runner";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { LVMNodeSpec } from "../api";
import { runOperation, type OperationDeps, type OperationRequest } from "./apply";
import { readLvmdConfig } from "./agent-service";
import { sha256Canonical } from "../planner/hash";
import { AgentError } from "./errors";
import { Journal } from "./journal";
import { FakeNode, fakePlanner, specFor } from "../../test/support/agent/fake-node";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-apply-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

class Crash extends Error {}

function setup(devices = ["/dev/loop3", "/dev/loop4"], lvmdConfigPath = path.join(dir, "lvmd.yaml")) {
  const node = new FakeNode(devices);
  const journal = new Journal({ stateDir: path.join(dir, "state") });
  const deps = (extra: Partial<OperationDeps> = {}): OperationDeps => ({
    run: node.run,
    discover: node.discover,
    journal,
    identity: node.identity,
    lvmdConfigPath,
    ...extra,
  });
  const request = (spec: LVMNodeSpec, approvedHash: string | undefined): OperationRequest => ({
    kind: "apply",
    spec,
    specDigest: sha256Canonical({ spec }),
    approvedHash,
    plan: (inv) => fakePlanner.planNode(inv, spec, planOptions()),
  });
  const planOptions = () => ({
    lvmdConfigPath,
    currentLvmdConfig: readLvmdConfig(lvmdConfigPath),
  });
  const planNow = async (spec: LVMNodeSpec) =>
    fakePlanner.planNode(await node.discover(), spec, planOptions());
  return { node, journal, deps, request, planNow };
}

async function conflict(p: Promise<unknown>): Promise<AgentError> {
  const e = await p.then(
    () => undefined,
    (err) => err,
  );
  expect(e).toBeInstanceOf(AgentError);
  return e as AgentError;
}

describe("runOperation", () => {
  it("executes the approved plan's steps in order and journals each", async () => {
    const { node, journal, deps, request, planNow } = setup();
    const spec = specFor({ vg0: ["/dev/loop3", "/dev/loop4"] });
    const plan = await planNow(spec);
    const result = await runOperation(deps(), request(spec, plan.hash));
    expect(node.commands.filter((c) => !["pvs", "lsblk", "vgs"].includes(c[0]!))).toEqual([
      ["pvcreate", "/dev/loop3"],
      ["pvcreate", "/dev/loop4"],
      ["vgcreate", "--addtag", "pulumi-lvm", "vg0", "/dev/loop3", "/dev/loop4"],
    ]);
    expect(result.steps.map((s) => `${s.op}:${s.outcome}`)).toEqual([
      "pvcreate:done",
      "pvcreate:done",
      "vgcreate:done",
      "write-lvmd-config:done",
    ]);
    expect(JSON.parse(fs.readFileSync(path.join(dir, "lvmd.yaml"), "utf8"))).toEqual({
      "socket-name": "/run/topolvm/lvmd.sock",
      "device-classes": [],
    });
    const last = journal.last()!;
    expect(last.finish?.result).toBe("succeeded");
    expect(last.start.devices).toEqual([
      { kname: "/dev/loop3", id: "kname:/dev/loop3" },
      { kname: "/dev/loop4", id: "kname:/dev/loop4" },
    ]);
    expect(last.actions.map((a) => a.type)).toEqual([
      "action-start",
      "action-finish",
      "action-start",
      "action-finish",
      "action-start",
      "action-finish",
      "action-start",
      "action-finish",
    ]);
  });

  it("creates lvmd.yaml's directory when the host has none (a bare host has no /etc/topolvm)", async () => {
    const lvmd = path.join(dir, "etc", "topolvm", "lvmd.yaml");
    const { deps, request, planNow } = setup(["/dev/loop3"], lvmd);
    const spec = specFor({ vg0: ["/dev/loop3"] });
    const result = await runOperation(deps(), request(spec, (await planNow(spec)).hash));
    expect(result.steps.map((s) => `${s.op}:${s.outcome}`)).toContain("write-lvmd-config:done");
    expect(JSON.parse(fs.readFileSync(lvmd, "utf8"))).toMatchObject({ "device-classes": [] });
  });

  it("refuses a stale plan hash with 409 and the fresh plan, running no command", async () => {
    const { node, journal, deps, request, planNow } = setup();
    const spec = specFor({ vg0: ["/dev/loop3"] });
    const seen = await planNow(spec);
    node.pvs.set("/dev/loop3", { vg: "", uuid: "someone-else" }); // the node changed since
    const e = await conflict(runOperation(deps(), request(spec, seen.hash)));
    expect(e.status).toBe(409);
    expect(e.code).toBe("PlanChanged");
    expect((e.details.plan as { hash: string }).hash).toBe((await planNow(spec)).hash);
    expect(node.commands).toEqual([]);
    expect(journal.last()).toBeUndefined();
  });

  it("is idempotent: the same spec applied again plans and runs nothing on the devices", async () => {
    const { node, deps, request, planNow } = setup();
    const spec = specFor({ vg0: ["/dev/loop3"] });
    await runOperation(deps(), request(spec, (await planNow(spec)).hash));
    node.commands.length = 0;
    const again = await runOperation(deps(), request(spec, (await planNow(spec)).hash));
    expect(again.steps).toEqual([]);
    expect(node.commands).toEqual([]);
  });

  it("checks a new group's name against the whole machine's only when confined (an unconfined discovery saw them all)", async () => {
    const spec = specFor({ vg0: ["/dev/loop3"] });
    for (const confined of [true, false]) {
      const { node, deps, request, planNow } = setup();
      const applied = await runOperation(deps({ confined }), request(spec, (await planNow(spec)).hash));
      expect(applied.steps.map((s) => s.op)).toContain("vgcreate");
      expect({ confined, read: node.commands.filter((c) => c[0] === "vgs") }).toEqual({
        confined,
        read: confined ? [ALL_VG_NAMES_ARGV] : [],
      });
    }
  });

  it("skips a step whose postcondition already holds", async () => {
    const { node, deps, request, planNow } = setup();
    const spec = specFor({ vg0: ["/dev/loop3"] });
    const plan = await planNow(spec);
    // The same plan, executed against a node where someone (a crashed earlier run) already did pvcreate:
    const stale = { ...request(spec, plan.hash), plan: () => plan };
    node.pvs.set("/dev/loop3", { vg: "", uuid: "u1" });
    const result = await runOperation(deps(), stale);
    expect(result.steps[0]).toMatchObject({
      op: "pvcreate",
      outcome: "skipped",
      reason: "/dev/loop3 is already a physical volume",
    });
    expect(node.commands.some((c) => c[0] === "pvcreate")).toBe(false);
  });

  it("resumes an interrupted apply when the same request comes again, and converges", async () => {
    const { node, journal, deps, request, planNow } = setup();
    const spec = specFor({ vg0: ["/dev/loop3", "/dev/loop4"] });
    const approved = await planNow(spec);
    const crashAfterFirst = async (i: number) => {
      if (i === 0) throw new Crash("kill -9");
    };
    await expect(
      runOperation(deps({ afterStep: crashAfterFirst }), request(spec, approved.hash)),
    ).rejects.toBeInstanceOf(Crash);
    const interrupted = journal.interrupted()!;
    expect(interrupted.start.op).toBeDefined();
    expect(node.pvs.has("/dev/loop3")).toBe(true);
    expect((await planNow(spec)).hash).not.toBe(approved.hash);

    const resumed = await runOperation(deps(), request(spec, approved.hash));
    expect(resumed.resumed).toBe(interrupted.start.op);
    expect(resumed.steps.map((s) => s.op)).toEqual(["pvcreate", "vgcreate", "write-lvmd-config"]);
    expect(node.vgs.has("vg0")).toBe(true);
    expect(node.pvs.get("/dev/loop3")?.vg).toBe("vg0");
    expect(node.commands.filter((c) => c[0] === "pvcreate")).toEqual([
      ["pvcreate", "/dev/loop3"],
      ["pvcreate", "/dev/loop4"],
    ]);
    const ops = journal.operations();
    expect(ops.map((o) => o.finish?.result)).toEqual(["superseded", "succeeded"]);
    expect(ops[1]!.start.resumes).toBe(interrupted.start.op);
    expect(ops[1]!.start.devices).toEqual(ops[0]!.start.devices);
  });

  it("does not resume when the fresh plan writes to a device the approved plan did not include", async () => {
    const { node, deps, request, planNow } = setup(["/dev/loop3"]);
    const spec = specFor({ vg0: ["/dev/loop3", "/dev/loop4"] });
    const approved = await planNow(spec); // /dev/loop4 does not exist yet: not in the plan
    await expect(
      runOperation(
        deps({ afterStep: async () => Promise.reject(new Crash()) }),
        request(spec, approved.hash),
      ),
    ).rejects.toBeInstanceOf(Crash);
    node.devices.set("/dev/loop4", { size: 1 << 30, signatures: [] }); // appears while the agent is down
    const before = node.commands.length;
    const e = await conflict(runOperation(deps(), request(spec, approved.hash)));
    expect(e.status).toBe(409);
    expect(e.details.unapprovedDevices).toEqual(["/dev/loop4"]);
    expect(node.commands.length).toBe(before);
  });

  it("re-checks the device identity right before writing, and refuses a device that changed", async () => {
    const { node, journal, deps, request } = setup(["/dev/loop3"]);
    node.devices.get("/dev/loop3")!.serial = "SN-A";
    const spec = specFor({ vg0: ["/dev/loop3"] });
    const plan = fakePlanner.planNode(await node.discover(), spec, {
      lvmdConfigPath: path.join(dir, "lvmd.yaml"),
    });
    // Between discovery and the write, a different disk takes the name:
    const swapping = {
      ...deps(),
      discover: async () => {
        const inv = await node.discover();
        node.devices.get("/dev/loop3")!.serial = "SN-B";
        return inv;
      },
    };
    const e = await conflict(runOperation(swapping, request(spec, plan.hash)));
    expect(e.code).toBe("DeviceChanged");
    expect(e.message).toMatch(/expected identity serial:SN-A, found serial:SN-B/);
    expect(node.commands.filter((c) => c[0] === "pvcreate")).toEqual([]);
    expect(journal.last()?.finish?.result).toBe("failed");
  });

  it("never wipes a device twice", async () => {
    const { node, journal, deps, request, planNow } = setup(["/dev/loop3"]);
    node.devices.get("/dev/loop3")!.signatures = ["xfs"];
    const spec = specFor({ vg0: ["/dev/loop3"] }, { forceWipeDevicesAndDestroyAllData: true });
    const crash = async () => Promise.reject(new Crash());
    await expect(
      runOperation(deps({ afterStep: crash }), request(spec, (await planNow(spec)).hash)),
    ).rejects.toBeInstanceOf(Crash);
    const first = journal.last()!.start.op;
    expect(journal.wiped(new Set([first])).size).toBe(1);
    // A signature shows up again before the retry: resuming the approved plan would wipe a device
    // the reviewer did not see with that signature: refused.
    const approved = journal.last()!.start.approvedHash;
    node.devices.get("/dev/loop3")!.signatures = ["ext4"];
    const e = await conflict(runOperation(deps(), request(spec, approved)));
    expect(e.code).toBe("PlanChanged");
    expect(e.details.unapprovedDevices).toEqual(["/dev/loop3"]);
    expect(node.commands.filter((c) => c[0] === "wipefs")).toHaveLength(1);
    // Approved again with its own hash: that is a new review of a new signature, so it is wiped.
    const result = await runOperation(deps(), request(spec, (await planNow(spec)).hash));
    expect(result.steps[0]).toMatchObject({ op: "wipefs", outcome: "done" });
    expect(node.commands.filter((c) => c[0] === "wipefs")).toHaveLength(2);
    expect(journal.wiped(new Set([first])).size).toBe(1);
  });

  it("reports a failed command with its argv, exit code and stderr, and journals the failure", async () => {
    const { node, journal, deps, request, planNow } = setup(["/dev/loop3"]);
    const spec = specFor({ vg0: ["/dev/loop3"] });
    node.failOn = "vgcreate --addtag pulumi-lvm vg0 /dev/loop3";
    const e = await conflict(runOperation(deps(), request(spec, (await planNow(spec)).hash)));
    expect(e.status).toBe(500);
    expect(e.code).toBe("CommandFailed");
    expect(e.details.command).toEqual({
      argv: ["vgcreate", "--addtag", "pulumi-lvm", "vg0", "/dev/loop3"],
      exitCode: 5,
      stderr: "  fake failure\n",
    });
    const last = journal.last()!;
    expect(last.finish).toMatchObject({ result: "failed", error: { exitCode: 5 } });
    expect(last.actions.at(-1)).toMatchObject({ type: "action-error", index: 1, action: "vgcreate" });
  });

  it("stops between steps when the agent is stopping, leaving the operation resumable", async () => {
    const { journal, deps, request, planNow } = setup(["/dev/loop3"]);
    const spec = specFor({ vg0: ["/dev/loop3"] });
    const stopping = new AbortController();
    const e = await conflict(
      runOperation(
        deps({ stopSignal: stopping.signal, afterStep: async () => stopping.abort() }),
        request(spec, (await planNow(spec)).hash),
      ),
    );
    expect(e.status).toBe(503);
    expect(journal.interrupted()).toBeDefined();
  });
});
