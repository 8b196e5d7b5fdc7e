/**
 * The plan's writes in the agent's lvm shell (--lvm-shell-writes, issue 18) against real lvm on loop
 * devices: every write answers exactly what the same command gives one-shot (exit status, stdout,
 * stderr), failing, succeeding and prompting, with reports in the same shell before and after; a
 * shell killed under an apply's write fails that apply with a clear error, runs nothing again, and
 * the next apply finishes the job.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import { createLvmRunner, LvmCommandError, type LvmRoute, type Runner } from "../../src/agent/lvm-runner";
import { LvmShell, spawnLvmShellProcess } from "../../src/agent/lvm-shell";
import { LVM_SHELL_SETTINGS } from "../../src/agent/lvm-shell-protocol";
import { writeSyncIoSystemDir } from "../../src/agent/lvm-system-dir";
import { fullreportArgv } from "../../src/inventory/lvm-report";
import { agentTestbed } from "../support/agent/testbed";
import { commandLogLines, lvm, planAndApply, request, thickSpec, vgs } from "./harness";

jest.setTimeout(180_000);

const bed = agentTestbed("lvm-shell-writes");
const shells: LvmShell[] = [];
afterAll(async () => {
  for (const s of shells) await s.close();
});

/** What a command gave: exit status, stdout and stderr (lvm's own words). */
async function outcome(run: Runner, argv: string[]) {
  try {
    const r = await run(argv);
    return { exitCode: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    if (!(e instanceof LvmCommandError)) throw e;
    return { exitCode: e.exitCode, stdout: "", stderr: e.stderr };
  }
}

/** A report with its uuids and device numbers left out and each list sorted: the state it shows. */
function comparable(report: string): unknown {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v))
      return v.map(strip).sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
    if (v && typeof v === "object")
      return Object.fromEntries(
        Object.entries(v)
          .filter(([k]) => !/uuid|major|minor/.test(k))
          .map(([k, x]) => [k, strip(x)]),
      );
    return v;
  };
  return strip(JSON.parse(report));
}

it("answers every kind of write as the same command does one-shot: success, failure, a prompt; reports around them stay exact", async () => {
  // Two sets of devices and names, the same sequence on each: one runner with its writes in the
  // shell, one running everything one-shot (both on the same synchronous-I/O copy).
  const dir = bed.scratch.path("shell-copy");
  await writeSyncIoSystemDir({
    to: dir,
    run: createLvmRunner({}),
    runWithCopy: createLvmRunner({ lvmSystemDir: dir }),
    extraSettings: LVM_SHELL_SETTINGS,
  });
  const oneShotDir = bed.scratch.path("one-shot-copy");
  await writeSyncIoSystemDir({ to: oneShotDir, run: createLvmRunner({}) });
  const S = [bed.scratch.loop(64), bed.scratch.loop(64), bed.scratch.loop(64)];
  const O = [bed.scratch.loop(64), bed.scratch.loop(64), bed.scratch.loop(64)];
  const shell = new LvmShell({
    spawn: spawnLvmShellProcess,
    argv: ["lvm"],
    env: { PATH: process.env.PATH, LC_ALL: "C", LVM_SUPPRESS_FD_WARNINGS: "1", LVM_SYSTEM_DIR: dir },
  });
  shells.push(shell);
  const routes: LvmRoute[] = [];
  const inShell = createLvmRunner({
    devices: S,
    lvmSystemDir: oneShotDir,
    shell,
    shellWrites: true,
    routed: (_t, r) => routes.push(r),
  });
  const oneShot = createLvmRunner({ devices: O, lvmSystemDir: oneShotDir });
  // An ext4 signature on the third device of each: pvcreate asks before it wipes it.
  for (const d of [S[2]!, O[2]!]) execFileSync("mkfs.ext4", ["-q", "-F", d]);

  const sequence = (D: string[], vg: string): string[][] => [
    fullreportArgv(D),
    ["pvcreate", D[0]!],
    ["vgcreate", "--addtag", "pulumi-lvm", vg, D[1]!],
    ["vgcreate", vg, D[0]!],
    ["vgextend", vg, D[0]!],
    ["pvchange", "--addtag", "kname-x", D[0]!],
    fullreportArgv(D),
    ["pvcreate", D[2]!],
    ["vgreduce", vg, D[0]!],
    ["pvremove", D[1]!],
    ["lvremove", `${vg}/nolv`],
    ["lvextend", "--extents", "+1", `${vg}/nolv`],
    ["lvchange", "--activate", "n", `${vg}/nolv`],
    ["vgremove", "agt-shw-nosuch"],
    ["vgremove", vg],
    ["pvremove", D[0]!],
    fullreportArgv(D),
  ];
  const a = sequence(S, "agt-shw-s");
  const b = sequence(O, "agt-shw-o");
  // The other set's names, so that the two runs' words can be compared.
  const same = (text: string) =>
    [0, 1, 2].reduce((t, i) => t.split(O[i]!).join(S[i]!), text.split("agt-shw-o").join("agt-shw-s"));
  for (const [i, argv] of a.entries()) {
    const got = await outcome(inShell, argv);
    const want = await outcome(oneShot, b[i]!);
    const norm = { ...want, stdout: same(want.stdout), stderr: same(want.stderr) };
    if (argv[0] === "lvm") {
      // Reports of the two sets: the same state but for uuids and minor numbers.
      expect(got.exitCode).toBe(0);
      expect(comparable(got.stdout)).toEqual(comparable(norm.stdout));
    } else expect({ argv, ...got }).toEqual({ argv, ...norm });
  }
  // Each write ran in the shell but the prompting one, which was run by itself.
  const writes = routes.filter((r) => !(r.via === "shell" && r.kind === "report"));
  expect(writes).toEqual(
    a
      .filter((argv) => argv[0] !== "lvm")
      .map((argv) =>
        argv[0] === "pvcreate" && argv[1] === S[2]
          ? { via: "one-shot", reason: "shell-prompted" }
          : { via: "shell", kind: "write" },
      ),
  );
  // The prompt was answered "no" (one-shot, stdin closed): the signature is still there.
  expect(execFileSync("blkid", ["-p", "-o", "value", "-s", "TYPE", S[2]!]).toString().trim()).toBe("ext4");
});

it("a shell killed under an apply's write: the apply fails naming the write and what to do, nothing runs again, the next apply finishes the job", async () => {
  const L = [bed.scratch.loop(64), bed.scratch.loop(64)];
  const vg = "agt-shw-apply";
  // The shell (the prefix run with the single word "lvm") reads its commands through a filter that,
  // while the marker exists, kills the shell's whole process group when a vgcreate arrives: before
  // lvm reads it, as a node's OOM killer or an operator might.
  const marker = bed.scratch.path("kill-at-vgcreate");
  const wrapper = bed.scratch.path("shell-killer.sh");
  fs.writeFileSync(
    wrapper,
    [
      "#!/bin/bash",
      `# test-only command prefix: kills the lvm shell's group at its first vgcreate while ${marker} exists`,
      'if [ "$#" -ne 1 ] || [ "$1" != lvm ]; then exec "$@"; fi',
      "while IFS= read -r line; do",
      `  if [[ "$line" == "'vgcreate'"* ]] && [ -e ${marker} ]; then rm -f ${marker}; kill -9 0; fi`,
      '  printf "%s\\n" "$line"',
      "done | lvm",
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
  fs.writeFileSync(marker, "");
  const { agent, token } = await bed.start({
    node: "node-shell-writes",
    devices: L,
    extraArgs: ["--lvm-sync-io", "--lvm-shell-writes", "--command-prefix", wrapper, "--host-root", "/"],
  });
  const files = bed.scratch.agentFiles();
  const spec = thickSpec(vg, L);
  const planned = await request(agent.url, "POST", "/v1/plan", { token, body: { spec } });
  expect(planned.status).toBe(200);
  const failed = await request(agent.url, "POST", "/v1/apply", {
    token,
    body: { spec, planHash: planned.json.hash },
  });
  expect(failed.status).toBeGreaterThanOrEqual(500);
  expect(failed.text).toMatch(/vgcreate .*agt-shw-apply/);
  expect(failed.text).toMatch(
    /did not finish \(the lvm shell was killed by SIGKILL while it ran this write: it may or may not have taken effect, so it was not run again; the next plan shows what it did\)/,
  );
  expect(fs.existsSync(marker)).toBe(false);
  // vgcreate was started once, in the shell, and never again.
  const vgcreates = () =>
    commandLogLines(files.commandLog).filter((l) => l.requested[0] === "vgcreate" && l.event === "start");
  expect(vgcreates().map((l) => (l as { via?: string }).via)).toEqual(["shell"]);
  expect(vgs(L)).toEqual([]);

  // The next plan shows the state as it is; applying it finishes the job in a new shell.
  await planAndApply(agent.url, token, spec);
  expect(lvm(L, ["vgs", "--noheadings", "-o", "vg_name"])).toContain(vg);
  expect(vgcreates().map((l) => (l as { via?: string }).via)).toEqual(["shell", "shell"]);
  const metrics = (await request(agent.url, "GET", "/metrics", { token })).text;
  expect(metrics).toMatch(/^pulumi_lvm_agent_lvm_commands_total\{via="shell",reason="write"\} [1-9]/m);
  expect(metrics).toMatch(/^pulumi_lvm_agent_lvm_shell_ends_total\{reason="died"\} 1$/m);
});
