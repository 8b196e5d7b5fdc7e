/**
 * /metrics needs no authentication, so a burst of scrapes must not become a burst of disk scans
 * (issue 11, item 5): a real agent on loop devices, 200 concurrent scrapes, and the agent's own
 * command log counting the processes they started.
 */
import { randomBytes } from "node:crypto";
import {
  commandLog,
  request,
  requireHostTier,
  Scratch,
  startAgent,
  thickSpec,
  writeTokenFile,
  type AgentProcess,
} from "./harness";

jest.setTimeout(180_000);

let scratch: Scratch;
let agent: AgentProcess | undefined;
let token: string;

beforeAll(async () => {
  requireHostTier();
  scratch = new Scratch("metrics-load");
  const [L1, L2] = [scratch.loop(), scratch.loop()];
  token = writeTokenFile(scratch.path("tokens"), { op: { user: "operator", node: "node-metrics" } }).op!;
  agent = await startAgent({
    node: "node-metrics",
    devices: [L1, L2],
    ...scratch.agentFiles(),
    auth: { tokenFile: scratch.path("tokens") },
  });
  const spec = thickSpec(`agt-met-${randomBytes(3).toString("hex")}`, [L1, L2]);
  const plan = await request(agent.url, "POST", "/v1/plan", { token, body: { spec } });
  const applied = await request(agent.url, "POST", "/v1/apply", {
    token,
    body: { spec, planHash: plan.json.hash },
  });
  expect(applied.status).toBe(200);
});

afterAll(async () => {
  await agent?.stop();
  scratch?.cleanup();
});

const commands = () => commandLog(scratch.path("commands.jsonl")).length;

it("200 concurrent scrapes run at most one discovery, and the gauges are there", async () => {
  const before = commands();
  await request(agent!.url, "GET", "/v1/inventory", { token });
  const perDiscovery = commands() - before;
  expect(perDiscovery).toBeGreaterThan(0);

  await new Promise((r) => setTimeout(r, 16_000)); // past the metrics cache age: the next scrape refreshes
  const start = commands();
  const scrapes = await Promise.all(
    Array.from({ length: 200 }, () => request(agent!.url, "GET", "/metrics")),
  );
  const started = commands() - start;
  process.stdout.write(
    `metrics-load: 200 concurrent scrapes started ${started} processes (one discovery: ${perDiscovery})\n`,
  );
  for (const s of scrapes) expect(s.status).toBe(200);
  expect(scrapes[0]!.text).toMatch(/pulumi_lvm_agent_volume_group_size_bytes\{vg="agt-met-/);
  expect(started).toBeLessThanOrEqual(perDiscovery);

  const again = commands();
  await Promise.all(Array.from({ length: 50 }, () => request(agent!.url, "GET", "/metrics")));
  expect(commands() - again).toBe(0);
});
