import { runCaptured } from "../../test/support/cli/captured-io";
import * as fs from "node:fs";
import * as path from "node:path";
import type { CliIO } from "../process/subcommand";
import { PACKAGE_VERSION } from "../version";
import { COMMANDS, main, usage, type Command } from "./main";

const cli = (argv: string[], files: Record<string, string> = {}) => runCaptured(main, argv, files);

test("the binary starts with a shebang line", () => {
  expect(fs.readFileSync(path.join(__dirname, "main.ts"), "utf8").split("\n")[0]).toBe("#!/usr/bin/env node");
});

test("the usage lists every command with its summary", () => {
  const lines = usage().split("\n");
  for (const [name, c] of Object.entries(COMMANDS))
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^  ${name} +${escapeRegExp(c.summary)}$`)),
    );
});

test.each([
  [[], "pulumi-lvm: no command"],
  [["valdiate"], 'pulumi-lvm: unknown command "valdiate"'],
  [["toString"], 'pulumi-lvm: unknown command "toString"'],
])("%j prints the usage and exits 2", async (argv, message) => {
  expect(await cli(argv)).toEqual({ code: 2, stdout: "", stderr: `${message}\n\n${usage()}` });
});

test.each([["--help"], ["-h"], ["help"]])("%s prints the usage on stdout and exits 0", async (flag) => {
  expect(await cli([flag])).toEqual({ code: 0, stdout: usage(), stderr: "" });
});

test("every command loads a module with run()", async () => {
  for (const c of Object.values(COMMANDS)) expect(typeof (await c.load()).run).toBe("function");
});

test("a command gets the arguments after its name", async () => {
  const r = await cli(["validate", "a.yaml"], { "a.yaml": "apiVersion: v1\nkind: ConfigMap\n" });
  expect(r).toEqual({ code: 1, stdout: "a.yaml: has no LVMNodeSet or LVMNode documents\n", stderr: "" });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

test.each([["--version"], ["version"]])("%s prints the version of package.json and exits 0", async (flag) => {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, "../../package.json"), "utf8"));
  expect(await cli([flag])).toEqual({ code: 0, stdout: `pulumi-lvm ${pkg.version}\n`, stderr: "" });
});

test.each(Object.keys(COMMANDS))("%s --help prints its usage on stdout and exits 0", async (name) => {
  const r = await cli([name, "--help"]);
  expect(r).toMatchObject({ code: 0, stderr: "" });
  expect(r.stdout).toMatch(/usage: pulumi-lvm/);
});

test.each([
  ["validate", [0, 1, 2]],
  ["inventory", [0, 1, 2]],
  ["plan", [0, 1, 2, 3, 4]],
  ["support-bundle", [0, 1, 2]],
  ["manifests", [0, 1, 2]],
])("%s --help ends with its exit codes", async (name, codes) => {
  const r = await cli([name, "--help"]);
  const table = r.stdout.slice(r.stdout.indexOf("\nexit codes:\n"));
  expect(table.trimEnd().split("\n").slice(2)).toEqual(
    codes.map((c) => expect.stringMatching(new RegExp(`^  ${c}  \\S`))),
  );
});

test("the binary's usage says what the read commands' exit codes mean", () => {
  expect(usage()).toContain(
    "0 all fine, 1 invalid input, 2 usage error,\n3 something is blocked or a node set selects no node, 4 the plan has changes",
  );
});

test.each(Object.keys(COMMANDS))("%s --version prints the version and exits 0", async (name) => {
  expect(await cli([name, "--version"])).toEqual({
    code: 0,
    stdout: `pulumi-lvm ${PACKAGE_VERSION}\n`,
    stderr: "",
  });
});

describe("commands that run until stopped", () => {
  // The agent and operator are PID 1 in their containers, where a SIGTERM that arrives before a
  // handler exists is dropped (stop-signal.ts): main() must catch it before the module loads.
  function slowCommand(untilStopped: boolean, seen: { aborted?: boolean }): Record<string, Command> {
    return {
      serve: {
        summary: "serve until stopped",
        untilStopped,
        load: async () => {
          process.emit("SIGTERM"); // arrives while the module loads (emit: no real signal is sent)
          return {
            run: async (io) => {
              seen.aborted = io.stopSignal?.aborted;
              return 0;
            },
          };
        },
      },
    };
  }
  const io: CliIO = {
    argv: ["serve"],
    readFile: async () => "",
    stdout: () => undefined,
    stderr: () => undefined,
  };

  test("a SIGTERM while the module loads reaches the subcommand as an aborted io.stopSignal", async () => {
    const seen: { aborted?: boolean } = {};
    expect(await main(io, slowCommand(true, seen))).toBe(0);
    expect(seen.aborted).toBe(true);
    expect(process.listenerCount("SIGTERM")).toBe(0);
  });

  test("other commands get no stop signal and install no handlers", async () => {
    const seen: { aborted?: boolean } = {};
    expect(await main(io, slowCommand(false, seen))).toBe(0);
    expect(seen.aborted).toBeUndefined();
  });

  test("the agent and the operator run until stopped", () => {
    expect(COMMANDS.agent!.untilStopped).toBe(true);
    expect(COMMANDS.operator!.untilStopped).toBe(true);
  });

  test("usage lists the commands it is given", () => {
    expect(usage(slowCommand(true, {}))).toContain("  serve  serve until stopped");
  });
});
