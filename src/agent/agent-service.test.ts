import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { adoptableOrphans, readLvmdConfig } from "./agent-service";
import { Journal } from "./journal";
import { AgentMetrics } from "./metrics";
import { FakeNode } from "../../test/support/agent/fake-node";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-service-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("readLvmdConfig", () => {
  it("reads lvmd.yaml; null when it is missing or not an lvmd config", () => {
    const file = path.join(dir, "lvmd.yaml");
    expect(readLvmdConfig(file)).toBeNull();
    fs.writeFileSync(
      file,
      'socket-name: "/run/topolvm/lvmd.sock"\ndevice-classes:\n  - name: "a"\n    volume-group: "vg0"\n',
    );
    expect(readLvmdConfig(file)).toEqual({
      "socket-name": "/run/topolvm/lvmd.sock",
      "device-classes": [{ name: "a", "volume-group": "vg0" }],
    });
    fs.writeFileSync(file, ": not: yaml: [");
    expect(readLvmdConfig(file)).toBeNull();
    fs.writeFileSync(file, "just text\n");
    expect(readLvmdConfig(file)).toBeNull();
  });
});

describe("adoptableOrphans", () => {
  it("offers the orphan PVs this agent created, by PV UUID and stable identity, never by kernel name", async () => {
    const node = new FakeNode(["/dev/sdb", "/dev/sdc", "/dev/sdd"]);
    node.pvs.set("/dev/sdb", { vg: "", uuid: "U-ours" });
    node.pvs.set("/dev/sdc", { vg: "", uuid: "U-foreign" });
    node.pvs.set("/dev/sdd", { vg: "vg0", uuid: "U-joined" });
    const journal = new Journal({ stateDir: dir });
    const at = "2026-11-22T00:00:00.000Z";
    journal.append({
      type: "action-finish",
      op: "o",
      index: 0,
      at,
      action: "pvcreate",
      device: "/dev/sdb",
      deviceId: "serial:S1",
      pvUuid: "U-ours",
      durationMs: 1,
    });
    journal.append({
      type: "action-finish",
      op: "o",
      index: 1,
      at,
      action: "pvcreate",
      device: "/dev/sdd",
      deviceId: "kname:/dev/sdd",
      pvUuid: "U-joined",
      durationMs: 1,
    });
    journal.append({
      type: "action-finish",
      op: "o",
      index: 2,
      at,
      action: "pvcreate",
      device: "/dev/sde",
      deviceId: "kname:/dev/sde",
      pvUuid: "U-gone",
      durationMs: 1,
    });
    expect(adoptableOrphans(journal, await node.discover())).toEqual(["pv:U-ours", "serial:S1"]);
  });
});

describe("metricsText", () => {
  it("runs no discovery again within the cache age after a failed one, and shares one refresh between concurrent scrapes", async () => {
    const { AgentService } = await import("./agent-service");
    const { AgentMetrics } = await import("./metrics");
    let calls = 0;
    let fail = true;
    // The cache's age is the service's clock, not the wall's: a loaded machine (a cold CI's Go builds
    // beside it) once took over 200 ms between two lines here and saw a second discovery.
    let nowMs = Date.parse("2026-11-29T08:00:00Z");
    const node = new FakeNode(["/dev/sdb"]);
    const service = new AgentService({
      node: "n",
      clock: () => new Date(nowMs),
      run: node.run,
      discover: async () => {
        calls++;
        await new Promise((r) => setTimeout(r, 20));
        if (fail) throw new Error("lsblk exited 64");
        return node.discover();
      },
      planner: { planNode: () => undefined as never, planTeardown: () => undefined as never },
      journal: new Journal({ stateDir: dir }),
      metrics: new AgentMetrics(),
      lvmdConfigPath: path.join(dir, "lvmd.yaml"),
      metricsMaxAgeMs: 200,
    });
    await Promise.all(Array.from({ length: 20 }, () => service.metricsText()));
    expect(calls).toBe(1);
    await service.metricsText();
    expect(calls).toBe(1); // the failure is not retried on every scrape
    nowMs += 199;
    await service.metricsText();
    expect(calls).toBe(1); // still within the cache age
    fail = false;
    nowMs += 1;
    await Promise.all(Array.from({ length: 20 }, () => service.metricsText()));
    expect(calls).toBe(2);
  });
});

describe("discovery cache use", () => {
  it("an apply discovers fresh (nothing cached) and names each step's devices; inventory and plan may use the cache", async () => {
    const { AgentService } = await import("./agent-service");
    const { fakePlanner, specFor } = await import("../../test/support/agent/fake-node");
    const node = new FakeNode(["/dev/loop3", "/dev/loop4"]);
    const calls: Array<{ fresh?: boolean } | undefined> = [];
    const touched: string[][] = [];
    const service = new AgentService({
      node: "n",
      run: node.run,
      discover: async (call) => {
        calls.push(call);
        return node.discover();
      },
      touched: (devices) => touched.push([...devices]),
      planner: fakePlanner,
      journal: new Journal({ stateDir: path.join(dir, "state") }),
      metrics: new AgentMetrics(),
      identity: node.identity,
      lvmdConfigPath: path.join(dir, "lvmd.yaml"),
    });
    const spec = specFor({ vg0: ["/dev/loop3", "/dev/loop4"] });
    await service.inventory();
    const plan = await service.plan(spec);
    expect(calls.map((c) => c?.fresh ?? false)).toEqual([false, false]);
    calls.length = 0;
    await service.apply({ spec, planHash: plan.hash });
    expect(calls.map((c) => c?.fresh ?? false)).toEqual([true]);
    expect(touched).toEqual([["/dev/loop3"], ["/dev/loop4"], ["/dev/loop3", "/dev/loop4"]]);
  });

  it("names the devices of a step that failed too", async () => {
    const { AgentService } = await import("./agent-service");
    const { fakePlanner, specFor } = await import("../../test/support/agent/fake-node");
    const node = new FakeNode(["/dev/loop3"]);
    const touched: string[][] = [];
    const service = new AgentService({
      node: "n",
      run: node.run,
      discover: () => node.discover(),
      touched: (devices) => touched.push([...devices]),
      planner: fakePlanner,
      journal: new Journal({ stateDir: path.join(dir, "state") }),
      metrics: new AgentMetrics(),
      identity: node.identity,
      lvmdConfigPath: path.join(dir, "lvmd.yaml"),
    });
    const spec = specFor({ vg0: ["/dev/loop3"] });
    const plan = await service.plan(spec);
    node.failOn = "pvcreate /dev/loop3";
    await expect(service.apply({ spec, planHash: plan.hash })).rejects.toThrow();
    expect(touched).toEqual([["/dev/loop3"]]);
  });
});

describe("sharing an inventory between reads", () => {
  /** A service whose discoveries are recorded (fresh or not) and wait for `hold`'s promise, if any. */
  async function counted(hold: (fresh: boolean) => Promise<void> | undefined = () => undefined) {
    const { AgentService } = await import("./agent-service");
    const { fakePlanner } = await import("../../test/support/agent/fake-node");
    const node = new FakeNode(["/dev/loop3", "/dev/loop4"]);
    const calls: boolean[] = [];
    const service = new AgentService({
      node: "n",
      run: node.run,
      discover: async (call) => {
        const fresh = call?.fresh ?? false;
        calls.push(fresh);
        await hold(fresh);
        return node.discover();
      },
      planner: fakePlanner,
      journal: new Journal({ stateDir: path.join(dir, "state") }),
      metrics: new AgentMetrics(),
      identity: node.identity,
      lvmdConfigPath: path.join(dir, "lvmd.yaml"),
    });
    return { service, calls };
  }

  it("a plan and a status at once run one discovery", async () => {
    const { specFor } = await import("../../test/support/agent/fake-node");
    let release!: () => void;
    const hold = new Promise<void>((r) => (release = r));
    const { service, calls } = await counted(() => hold);
    const both = Promise.all([
      service.plan(specFor({ vg0: ["/dev/loop3"] })),
      service.status(),
      service.inventory(),
    ]);
    await new Promise((r) => setTimeout(r, 10));
    release();
    await both;
    expect(calls).toEqual([false]);
  });

  it("a read that arrives after an apply does not join a discovery that started before it", async () => {
    const { specFor } = await import("../../test/support/agent/fake-node");
    let holdNext = false;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // The first read after holdNext is set is slow (a preview's), still running when the apply ends.
    const { service } = await counted((fresh) => {
      if (!holdNext || fresh) return undefined;
      holdNext = false;
      return gate;
    });
    const spec = specFor({ vg0: ["/dev/loop3"] });
    const plan = await service.plan(spec);
    holdNext = true;
    const before = service.inventory();
    await service.apply({ spec, planHash: plan.hash });
    // Resolves on its own discovery: joining the one from before the apply would wait for the gate.
    const status = await service.status();
    expect(status.node).toBe("n");
    release();
    await before;
  });

  it("after an apply, a status discovers again: the operation changed the node", async () => {
    const { specFor } = await import("../../test/support/agent/fake-node");
    const { service, calls } = await counted();
    const spec = specFor({ vg0: ["/dev/loop3"] });
    const plan = await service.plan(spec);
    await service.apply({ spec, planHash: plan.hash });
    calls.length = 0;
    await service.status();
    expect(calls).toEqual([false]);
  });
});
