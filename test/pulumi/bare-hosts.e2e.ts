/**
 * examples/bare-hosts with the real engine against a real sshd: the Pulumi CLI and Node.js host
 * (test/pulumi/install.sh), the real Command provider (pulumi-resource-command 1.2.1,
 * test/pulumi/install-command.sh), Debian's OpenSSH server running inside the qemu guest
 * (test/vm/guest.ts, a real kernel: thin pools work), reached through a forwarded port with a key
 * made here. AgentHost copies the agent bundle over sftp and installs it; the guest has no systemd,
 * so the install script runs the agent under its supervisor shell (docs/components.md#agenthost).
 * Every outcome on the disks is checked with the guest's own `vgs`/`lvs`, never through the agent.
 *
 * In `npm test` (test/run.sh's lane `a`; test/setup.sh installs openssh-server, test/setup-late.sh
 * builds the Command plugin); alone: `npm run test:bare-hosts`; docs/testing-pulumi.md. Anything missing
 * is a failure that says how to install it, never a skip.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { request } from "../support/agent/http";
import { refusingPort } from "../net";
import { REPO_ROOT, startGuest, type Guest } from "../vm/guest";
import { PulumiWorkspace, requirePulumiBinaries, type StateResource } from "./cli";
import { requireCommandPlugin } from "./command-plugin";
import { makeClientKey, requireSshd, startGuestSshd, type ClientKey } from "./guest-sshd";
import * as bareHost from "./bare-host-guest";
import { diagnostics, linesWith, planList } from "./preview-plan";
import { Timings } from "../timings";

jest.setTimeout(1_800_000);

const EXAMPLE = path.join(REPO_ROOT, "examples", "bare-hosts");
const NODE = "edge-1";
const VG = "vg-data";
const POOL = "pool0";
const SSH_PORT = 22;
/** sshd's second port: sessions there have no Node.js on PATH (a host without Node). */
const NO_NODE_PORT = 2223;
/** A second sshd in the guest, with a host key of its own: a machine that is not the host. */
const IMPOSTOR_PORT = 2224;
const AGENT_PORT = 9443;
const GiB = 1024 ** 3;
const DISKS_TYPE = "pulumi-nodejs:dynamic/pulumi-lvm:NodeSetDisks";
/** The key Pulumi marks a secret with, in the state and on the wire. */
const SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d";
/** Generous: the guest runs under TCG on 2 shared cores. */
const LONG = { timeoutMs: 900_000 };

let dir: string;
let guest: Guest | undefined;
let ws: PulumiWorkspace | undefined;
let errWs: PulumiWorkspace | undefined;
let key: ClientKey;
let wrongKey: ClientKey;
let bundle: string;
/** The guest sshd's host key (AgentHost's hostKey) and the impostor's. */
let hostKey = "";
let impostorKey = "";
/** The agent's token and CA as the host holds them (read in the guest after the install). */
let token = "";
let caCertificate = "";
const timings = new Timings();
const timed = <T>(name: string, f: () => T): T => timings.timed(name, f);

beforeAll(async () => {
  requirePulumiBinaries();
  const plugin = requireCommandPlugin();
  requireSshd();
  fs.mkdirSync("/var/tmp/pulumi-bare-hosts-tests", { recursive: true });
  dir = fs.mkdtempSync("/var/tmp/pulumi-bare-hosts-tests/run-");
  key = makeClientKey(dir, "id_edge");
  wrongKey = makeClientKey(dir, "id_wrong");
  bundle = timed("agent bundle", () =>
    execFileSync("bash", [path.join(REPO_ROOT, "scripts/agent-bundle.sh"), path.join(dir, "agent.tgz")], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }).trim(),
  );
  const t0 = Date.now();
  guest = await startGuest({
    hostname: NODE,
    // vdb and vdc over the example's 10 GiB selector; vdd too small (not selected, never touched).
    disks: [
      { sizeBytes: 12 * GiB, serial: "SN-EDGE-B" },
      { sizeBytes: 12 * GiB, serial: "SN-EDGE-C" },
      { sizeBytes: 2 * GiB, serial: "SN-EDGE-D" },
    ],
    forwardPorts: [SSH_PORT, NO_NODE_PORT, AGENT_PORT, IMPOSTOR_PORT],
  });
  await bareHost.writableOpt(guest);
  ({ hostKey } = await startGuestSshd(guest, {
    port: SSH_PORT,
    noNodePort: NO_NODE_PORT,
    authorizedKeys: [key.publicKey],
  }));
  // It lets the same client key in: only its host key tells it from the host.
  ({ hostKey: impostorKey } = await startGuestSshd(guest, {
    name: "pl-impostor",
    port: IMPOSTOR_PORT,
    authorizedKeys: [key.publicKey],
  }));
  timings.add("guest boot + sshd", Date.now() - t0);

  ws = new PulumiWorkspace("edge", randomBytes(12).toString("hex"), {
    root: dir,
    programDir: EXAMPLE,
    plugins: [plugin],
  });
  ws.init();
  configureHosts(ws, [
    {
      name: NODE,
      sshPort: guest.hostPort(SSH_PORT),
      agentUrl: `https://127.0.0.1:${guest.hostPort(AGENT_PORT)}`,
    },
  ]);
  // From stdin, so the key is not on any command line either.
  ws.ok(["config", "set", "--secret", "sshPrivateKey"], { input: key.privateKey });
  ws.ok(["config", "set", "agentBundle", bundle]);
  ["/dev/vdb", "/dev/vdc", "/dev/vdd"].forEach((d, i) =>
    ws!.ok(["config", "set", "--path", `devices[${i}]`, d]),
  );
}, 1_200_000);

afterAll(async () => {
  await guest?.stop();
  ws?.cleanup();
  errWs?.cleanup();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  console.log(timings.table("bare-hosts e2e, seconds"));
});

/** The example's `hosts` config: every host at 127.0.0.1 (qemu's forwarded ports), user root. */
function configureHosts(
  w: PulumiWorkspace,
  hosts: ReadonlyArray<{ name: string; sshPort: number; agentUrl?: string; hostKey?: string }>,
): void {
  w.run(["config", "rm", "hosts"]);
  hosts.forEach((h, i) => {
    w.ok(["config", "set", "--path", `hosts[${i}].name`, h.name]);
    w.ok(["config", "set", "--path", `hosts[${i}].address`, "127.0.0.1"]);
    w.ok(["config", "set", "--path", `hosts[${i}].sshPort`, String(h.sshPort)]);
    w.ok(["config", "set", "--path", `hosts[${i}].hostKey`, h.hostKey ?? hostKey]);
    if (h.agentUrl) w.ok(["config", "set", "--path", `hosts[${i}].agentUrl`, h.agentUrl]);
  });
}

/** argv in the guest (root, its own lvm), stdout. */
const inGuest = (argv: string[]) => guest!.run(argv, { timeoutMs: 120_000 });
const guestVgs = () => bareHost.vgs(guest!, VG);
const guestLvs = () => bareHost.lvs(guest!, VG);
const agentProcesses = () => bareHost.agentProcesses(guest!);

function disksResource(w: PulumiWorkspace): StateResource | undefined {
  return w.exportState().deployment.resources?.find((r) => r.type === DISKS_TYPE);
}
interface NodeState {
  state?: string;
  planHash: string;
  pending?: string;
  volumeGroups?: Record<string, { state: string; members: string[]; message?: string }>;
}
const nodeOf = (r: StateResource | undefined) =>
  (r?.outputs?.nodes as Record<string, NodeState> | undefined)?.[NODE];

describe("pulumi up of examples/bare-hosts over SSH into the guest", () => {
  it("the first preview: the agent's copy and install, the inventory's read; the plan not known yet, said in words; no disk is touched", async () => {
    const { output } = timed("preview (first)", () => ws!.ok(["preview", "--diff"], LONG));
    expect(output).toContain("+ pulumi-lvm:index:AgentHost: (create)");
    expect(output).toContain("+ pulumi-lvm:index:HostInventory: (create)");
    expect(output).toContain("+ command:remote:CopyToRemote: (create)");
    expect(output).toContain("+ command:remote:Command: (create)");
    expect(planList(output, "planOverview")).toEqual([
      expect.stringMatching(
        new RegExp(`^${NODE}: plan not known yet: the inventory of ${NODE} is collected over SSH`),
      ),
    ]);
    expect(await guestVgs()).toEqual([]);
    expect((await guest!.exec(["test", "-e", "/opt/pulumi-lvm"])).code).not.toBe(0);
  });

  it("up: the agent is installed over SSH and runs under the supervisor (no systemd here), TLS with its own CA; the inventory is read and recorded; no disk is touched", async () => {
    const { output } = timed("up (agent, inventory)", () => ws!.ok(["up", "--yes"], LONG));
    // the stack, the AgentHost and its three children, the HostInventory and its Command, the NodeSetDisks
    expect(output).toMatch(/\+ 8 created/);
    // The install script said which way it started the agent (stderr is logged by the Command).
    expect(output).toContain("no systemd: starting the agent as a detached process under a supervisor");
    expect((await guest!.exec(["test", "-d", "/run/systemd/system"])).code).not.toBe(0);

    const procs = await agentProcesses();
    expect(procs).toEqual([
      expect.stringMatching(/^\d+ sh \/opt\/pulumi-lvm\/supervise\.sh$/),
      expect.stringMatching(
        new RegExp(
          `^\\d+ /usr/bin/node /opt/pulumi-lvm/current/dist/src/cli/main\\.js agent --node ${NODE} `,
        ),
      ),
    ]);
    // One process group: the supervisor's, as in the pid file.
    const pid = (await inGuest(["cat", "/opt/pulumi-lvm/agent.pid"])).trim();
    expect(procs.map((p) => p.split(" ")[0])).toEqual([pid, pid]);

    token = (await inGuest(["cat", "/opt/pulumi-lvm/etc/tokens"])).split(",")[0]!;
    caCertificate = await inGuest(["cat", "/opt/pulumi-lvm/etc/tls.crt"]);
    const url = `https://127.0.0.1:${guest!.hostPort(AGENT_PORT)}`;
    const status = await request(url, "GET", "/v1/status", { token, ca: caCertificate, timeoutMs: 30_000 });
    expect(status.status).toBe(200);
    expect(status.json.node).toBe(NODE);
    // Only the host's own CA is trusted for it.
    await expect(request(url, "GET", "/healthz", { timeoutMs: 30_000 })).rejects.toThrow(
      /self[- ]signed|certificate/,
    );
    // The inventory read in the guest is recorded (plain: no secret in it); the node is pending.
    const disks = disksResource(ws!);
    const inventory = JSON.parse((disks?.inputs?.inventories as Record<string, string>)[NODE]!);
    expect(inventory.nodes[0].name).toBe(NODE);
    expect(inventory.nodes[0].agentPlanOptions).toMatchObject({ adoptOrphanPvs: [] });
    expect(nodeOf(disks)).toMatchObject({
      planHash: "",
      stepsDone: 0,
      pending: expect.stringMatching(/^plan not shown yet/),
    });
    expect(await guestVgs()).toEqual([]);
  });

  it("preview --diff shows the node's plan from its recorded inventory: vdb and vdc claimed for the new volume group, not vdd, the thin pool; nothing written", async () => {
    const { output } = timed("preview (plan)", () => ws!.ok(["preview", "--diff"], LONG));
    expect(output).toContain(`~ ${DISKS_TYPE}: (update)`);
    expect(output).toContain(`${NODE}: {`);
    expect(planList(output, "claimed").sort()).toEqual(
      ["/dev/vdb", "/dev/vdc"].map((d) => `${d} → ${VG} (new volume group)`),
    );
    // vdd (2 GiB) is not selected by the example's "size > 10Gi": neither claimed nor excluded.
    expect(planList(output, "excluded").filter((e) => e.startsWith("/dev/vd"))).toEqual([]);
    const actions = planList(output, "actions").map((a) => a.split(":")[0] ?? a);
    expect(actions).toEqual(
      expect.arrayContaining(["pvcreate /dev/vdb", "pvcreate /dev/vdc", `vgcreate ${VG}`]),
    );
    expect(planList(output, "actions")).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^lvcreate-thinpool ${VG}: create thin pool ${VG}/${POOL} `)),
      ]),
    );
    expect(await guestVgs()).toEqual([]);
  });

  it("up builds the volume group and its thin pool, as the guest's own vgs/lvs show", async () => {
    const { output } = timed("up (disks)", () => ws!.ok(["up", "--yes"], LONG));
    expect(output).toMatch(/~ 1 updated/);
    expect(await guestVgs()).toEqual([{ vg_name: VG, pv_count: "2", vg_tags: "pulumi-lvm" }]);
    expect(await guestLvs()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          lv_name: POOL,
          segtype: "thin-pool",
          lv_attr: expect.stringMatching(/^t/),
        }),
      ]),
    );
    const pvs = await inGuest(["pvs", "--noheadings", "-o", "pv_name,vg_name"]);
    expect(linesWith(pvs, "/dev/vdd").join("").trim()).toBe(""); // the unselected disk stays untouched
    expect(nodeOf(disksResource(ws!))).toMatchObject({ planHash: expect.stringMatching(/^[0-9a-f]{16,}$/) });
  });

  it("a second preview --expect-no-changes passes", () => {
    const { output } = timed("preview --expect-no-changes", () =>
      ws!.ok(["preview", "--expect-no-changes", "--diff"], LONG),
    );
    expect(output).not.toMatch(/to update|to create|to delete/);
  });

  it("refresh sees a change made on the host (the thin pool removed by hand); the disks read again, preview shows the repair, up puts it back", async () => {
    await inGuest(["lvremove", "-y", `${VG}/${POOL}`]);
    expect((await guestLvs()).map((l) => l.lv_name)).not.toContain(POOL);
    // The refresh records what the agent reports in the state (the engine may show the resource as
    // unchanged: the provider's diff sees no work, the plan from the recorded inventory was applied).
    const refresh = timed("refresh (drift)", () => ws!.ok(["refresh", "--yes"], LONG));
    console.log(
      `refresh after the pool was removed by hand:\n${linesWith(refresh.output, "edge-disks").join("\n")}`,
    );
    const node = nodeOf(disksResource(ws!));
    expect(node?.state).not.toBe("Ready");
    expect(node?.volumeGroups?.[VG]).toMatchObject({
      state: "Degraded",
      message: expect.stringContaining(POOL),
    });
    // The plans come from the recorded inventory: read the disks again (a new revision), which
    // records the new inventory and touches nothing; then the preview shows the repair.
    ws!.ok(["config", "set", "inventoryRevision", "after-drift"]);
    timed("up (inventory again)", () => ws!.ok(["up", "--yes"], LONG));
    expect((await guestLvs()).map((l) => l.lv_name)).not.toContain(POOL);
    expect(nodeOf(disksResource(ws!))).toMatchObject({
      pending: expect.stringMatching(/^plan not shown yet/),
    });
    const preview = timed("preview (repair)", () => ws!.ok(["preview", "--diff"], LONG));
    const repair = planList(preview.output, "actions");
    expect(repair).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^lvcreate-thinpool ${VG}: create thin pool ${VG}/${POOL} `)),
      ]),
    );
    expect(repair.filter((a) => /^(pvcreate|vgcreate|vgextend|wipefs) /.test(a))).toEqual([]);
    timed("up (repair)", () => ws!.ok(["up", "--yes"], LONG));
    expect((await guestLvs()).find((l) => l.lv_name === POOL)).toMatchObject({ segtype: "thin-pool" });
  });

  it("a new credentialsRevision rotates the agent's token and certificate in one up: the old token refused, the disks untouched", async () => {
    const url = `https://127.0.0.1:${guest!.hostPort(AGENT_PORT)}`;
    const lvsBefore = await guestLvs();
    ws!.ok(["config", "set", "credentialsRevision", "rotated-1"]);
    const { output } = timed("up (rotation)", () => ws!.ok(["up", "--yes"], LONG));
    expect(output).toContain("the credentials revision changed: a new token and serving certificate");
    // The install command updated (its script changed), not replaced: no delete ran.
    expect(output).not.toMatch(/replaced|deleted/);
    const newToken = (await inGuest(["cat", "/opt/pulumi-lvm/etc/tokens"])).split(",")[0]!;
    const newCa = await inGuest(["cat", "/opt/pulumi-lvm/etc/tls.crt"]);
    expect(newToken).not.toBe(token);
    expect(newCa).not.toBe(caCertificate);
    const ok = await request(url, "GET", "/v1/status", { token: newToken, ca: newCa, timeoutMs: 30_000 });
    expect(ok.status).toBe(200);
    const old = await request(url, "GET", "/v1/status", { token, ca: newCa, timeoutMs: 30_000 });
    expect(old.status).toBe(401);
    expect(await agentProcesses()).toHaveLength(2);
    expect(await guestLvs()).toEqual(lvsBefore);
    // NodeSetDisks got the new endpoint in the same up: a preview now has nothing to do.
    ws!.ok(["preview", "--expect-no-changes"], LONG);
    token = newToken;
    caCertificate = newCa;
  });

  it("the token and the private key are stored only encrypted: not in stack export, the backend's files, the stack config, nor any output", () => {
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    const keyLines = key.privateKey.split("\n").filter((l) => l.length > 20 && !l.startsWith("-----"));
    expect(keyLines.length).toBeGreaterThan(0);
    const secrets = [token, ...keyLines];
    const exported = ws!.exportState();
    const files = [...PulumiWorkspace.filesUnder(ws!.backend), ...PulumiWorkspace.filesUnder(ws!.project)];
    expect(files.length).toBeGreaterThan(2);
    for (const s of secrets) {
      expect(linesWith(exported.text, s)).toEqual([]);
      expect(files.flatMap((f) => linesWith(f.text, s).map((l) => `${f.file}: ${l}`))).toEqual([]);
      expect(ws!.transcript.flatMap((t) => linesWith(t, s))).toEqual([]);
    }
    // They are there, as secrets: the connection's key and the agent's answer (its token).
    const command = exported.deployment.resources!.find(
      (r) => r.type === "command:remote:Command" && r.urn.endsWith("-agent"),
    )!;
    expect(JSON.stringify(command.inputs!.connection)).toContain(SECRET_SIG_KEY);
    expect(JSON.stringify(command.outputs!.stdout)).toContain(SECRET_SIG_KEY);
    const shown = ws!.ok(["stack", "export", "--show-secrets"]).stdout;
    expect(shown).toContain(token);
    ws!.transcript.pop(); // that one shows them on purpose
  });

  it("destroy removes the agent and its files; the volume group and its thin pool stay (Retain), so does the journal", async () => {
    const { output } = timed("destroy", () => ws!.ok(["destroy", "--yes"], LONG));
    // the stack, the NodeSetDisks, the AgentHost and its 3 children, the HostInventory and its Command
    expect(output).toMatch(/- 8 deleted/);
    expect(await agentProcesses()).toEqual([]);
    expect((await guest!.exec(["test", "-e", "/opt/pulumi-lvm"])).code).not.toBe(0);
    expect((await guest!.exec(["test", "-d", "/var/lib/pulumi-lvm/agent"])).code).toBe(0);
    expect(await guestVgs()).toEqual([{ vg_name: VG, pv_count: "2", vg_tags: "pulumi-lvm" }]);
    expect((await guestLvs()).map((l) => l.lv_name)).toContain(POOL);
  });
});

describe("hosts that cannot take the agent: each a clear error naming the host", () => {
  beforeAll(() => {
    errWs = new PulumiWorkspace("broken", randomBytes(12).toString("hex"), {
      root: dir,
      programDir: EXAMPLE,
      plugins: [requireCommandPlugin()],
    });
    errWs.init();
    errWs.ok(["config", "set", "agentBundle", bundle]);
    errWs.ok(["config", "set", "--path", "devices[0]", "/dev/vdb"]);
  });

  it("an unreachable host, then a host without Node.js", async () => {
    // Two ups: with --continue-on-error, the unreachable host's copy (its remotePath from the failed
    // prepare command, never known) fails the provider's check, which ends the whole update.
    const closed = await refusingPort(); // nothing listens there, nor can while the test runs
    configureHosts(errWs!, [{ name: "edge-unreachable", sshPort: closed }]);
    errWs!.ok(["config", "set", "--secret", "sshPrivateKey"], { input: key.privateKey });
    const up = timed("up (unreachable)", () => errWs!.run(["up", "--yes"], LONG));
    console.log(`up with an unreachable host:\n${diagnostics(up.output)}`);
    expect(up.code).not.toBe(0);
    const unreachable = linesWith(up.output, "edge-unreachable-prepare");
    expect(unreachable.join("\n")).toMatch(/edge-unreachable-prepare/);
    expect(up.output).toContain(`127.0.0.1:${closed}`);
    expect(up.output).toMatch(/connection refused/);

    configureHosts(errWs!, [{ name: "edge-no-node", sshPort: guest!.hostPort(NO_NODE_PORT) }]);
    const noNode = timed("up (no node)", () => errWs!.run(["up", "--yes"], LONG));
    console.log(`up with a host without Node.js:\n${diagnostics(noNode.output)}`);
    expect(noNode.code).not.toBe(0);
    expect(noNode.output).toContain(
      "pulumi-lvm AgentHost edge-no-node: no node (Node.js >= 20) on this host",
    );
    expect(linesWith(noNode.output, "edge-no-node-agent").length).toBeGreaterThan(0);
    // Nothing was installed on the host without Node.js.
    expect((await guest!.exec(["test", "-e", "/opt/pulumi-lvm"])).code).not.toBe(0);
  });

  it("a wrong key", () => {
    configureHosts(errWs!, [{ name: "edge-wrong-key", sshPort: guest!.hostPort(SSH_PORT) }]);
    errWs!.ok(["config", "set", "--secret", "sshPrivateKey"], { input: wrongKey.privateKey });
    const up = timed("up (wrong key)", () => errWs!.run(["up", "--yes"], LONG));
    console.log(`up with a wrong key:\n${diagnostics(up.output)}`);
    expect(up.code).not.toBe(0);
    expect(linesWith(up.output, "edge-wrong-key-prepare").length).toBeGreaterThan(0);
    expect(up.output).toMatch(/unable to authenticate/);
  });

  it("another machine at the host's address (an sshd with another host key): refused before anything is copied", async () => {
    configureHosts(errWs!, [{ name: "edge-impostor", sshPort: guest!.hostPort(IMPOSTOR_PORT), hostKey }]);
    expect(impostorKey).not.toBe(hostKey);
    const bundleDirs = async () =>
      (await guest!.exec(["sh", "-c", "ls -d /tmp/pulumi-lvm-agent.* 2>/dev/null || true"])).stdout.trim();
    const before = await bundleDirs();
    errWs!.ok(["config", "set", "--secret", "sshPrivateKey"], { input: key.privateKey });
    const up = timed("up (impostor)", () => errWs!.run(["up", "--yes"], LONG));
    console.log(`up against a host with another host key:\n${diagnostics(up.output)}`);
    expect(up.code).not.toBe(0);
    expect(linesWith(up.output, "edge-impostor-prepare").length).toBeGreaterThan(0);
    expect(up.output).toMatch(/host key mismatch/);
    // Nothing ran there: no directory made for a bundle, nothing installed.
    expect(await bundleDirs()).toBe(before);
    expect((await guest!.exec(["test", "-e", "/opt/pulumi-lvm"])).code).not.toBe(0);
  });

  it("neither key reached any output or file of the failing stack", () => {
    const files = [
      ...PulumiWorkspace.filesUnder(errWs!.backend),
      ...PulumiWorkspace.filesUnder(errWs!.project),
    ];
    for (const k of [key, wrongKey])
      for (const line of k.privateKey.split("\n").filter((l) => l.length > 20 && !l.startsWith("-----"))) {
        expect(files.flatMap((f) => linesWith(f.text, line).map((l) => `${f.file}: ${l}`))).toEqual([]);
        expect(errWs!.transcript.flatMap((t) => linesWith(t, line))).toEqual([]);
      }
  });
});
