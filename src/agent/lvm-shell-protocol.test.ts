import * as argv from "../planner/argv";
import {
  isPrompt,
  parseShellAnswer,
  shellLine,
  shellRefusal,
  writeOutput,
  type ShellScope,
} from "./lvm-shell-protocol";

/** What lvm 2.03.16's shell wrote to LVM_REPORT_FD for `pvs --reportformat json` (captured on this machine). */
const CAPTURED = [
  "  {",
  '      "report": [',
  "          {",
  '              "pv": [',
  '                  {"pv_name":"/dev/loop0", "vg_name":"agt-sh-x", "pv_fmt":"lvm2", "pv_attr":"a--", "pv_size":"124.00m", "pv_free":"124.00m"}',
  "              ]",
  "          }",
  "      ]",
  "      ,",
  '      "log": [',
  '          {"log_seq_num":"5", "log_type":"status", "log_context":"shell", "log_object_type":"cmd", "log_object_name":"pvs", "log_object_id":"", "log_object_group":"", "log_object_group_id":"", "log_message":"success", "log_errno":"0", "log_ret_code":"1"}',
  "      ]",
  "  }",
  "",
].join("\n");
/** The same command run by itself, on stdout. */
const ONE_SHOT = [
  "  {",
  '      "report": [',
  "          {",
  '              "pv": [',
  '                  {"pv_name":"/dev/loop0", "vg_name":"agt-sh-x", "pv_fmt":"lvm2", "pv_attr":"a--", "pv_size":"124.00m", "pv_free":"124.00m"}',
  "              ]",
  "          }",
  "      ]",
  "  }",
  "",
].join("\n");

describe("parseShellAnswer", () => {
  it("gives the report exactly as the command prints it by itself", () => {
    expect(parseShellAnswer(CAPTURED)).toEqual({ retCode: 1, messages: [], report: ONE_SHOT });
  });

  it("is incomplete until the shell's status entry and the object's end", () => {
    expect(parseShellAnswer(CAPTURED.slice(0, -5))).toBeUndefined();
    const inner = CAPTURED.replace(
      '"log_context":"shell", "log_object_type":"cmd"',
      '"log_context":"processing", "log_object_type":"pv"',
    );
    expect(parseShellAnswer(inner)).toBeUndefined();
  });

  it("gives the messages and return code of a failed command, and no report when it printed none", () => {
    const failed = [
      "  {",
      '      "log": [',
      '          {"log_seq_num":"1", "log_type":"error", "log_context":"shell", "log_object_type":"cmd", "log_object_name":"frobnicate", "log_message":"No such command", "log_ret_code":"0"},',
      '          {"log_seq_num":"2", "log_type":"status", "log_context":"shell", "log_object_type":"cmd", "log_object_name":"frobnicate", "log_message":"failure", "log_ret_code":"2"}',
      "      ]",
      "  }",
      "",
    ].join("\n");
    const a = parseShellAnswer(failed)!;
    expect(a.retCode).toBe(2);
    expect(a.messages.map((m) => m.log_message)).toEqual(["No such command"]);
    expect(a.report).toBeUndefined();
  });
});

describe("shellLine", () => {
  it("quotes every word, so the device filter's characters reach lvm as they are", () => {
    expect(
      shellLine(["pvs", "--config", 'devices { filter=["a|^/dev/loop0$|","r|.*|"] }', "#x", "!!", ""]),
    ).toBe(`'pvs' '--config' 'devices { filter=["a|^/dev/loop0$|","r|.*|"] }' '#x' '!!' ''\n`);
    expect(shellLine(["vgs", "it's"])).toBe(`'vgs' "it's"\n`);
  });

  it("refuses what lvm's line splitting cannot carry: both quotes, control or non-ASCII characters, too many words", () => {
    expect(shellLine(["vgs", `a'b"c`])).toBeUndefined();
    expect(shellLine(["vgs", "a\nb"])).toBeUndefined();
    expect(shellLine(["vgs", "é"])).toBeUndefined();
    expect(shellLine(Array.from({ length: 61 }, () => "x"))).toBeUndefined();
  });
});

/** One of each write the planner's argv builders make, pvmove left out (it stays one-shot). */
function planWrites(): string[][] {
  const d = "/dev/loop0";
  return [
    argv.pvcreateArgv(d),
    argv.vgcreateArgv("vg1", [d, "/dev/loop1"]),
    argv.vgextendArgv("vg1", d),
    argv.pvchangeAddTagArgv("kname-loop0", d),
    argv.vgreduceArgv("vg1", d),
    argv.pvremoveArgv(d),
    argv.lvcreateThinPoolArgv({
      vg: "vg1",
      pool: "p",
      extents: "90%VG",
      chunkSizeBytes: 65536,
      metadataSizeBytes: 8 << 20,
    }),
    argv.lvextendThinPoolArgv("vg1", "p", "+100%FREE"),
    argv.lvextendThinPoolMetadataArgv("vg1", "p", 16 << 20),
    argv.lvchangeDeactivateArgv("vg1", "p"),
    argv.lvremoveArgv("vg1", "p"),
    argv.vgremoveArgv("vg1"),
    argv.vgremoveArgv("vg1", true),
  ];
}

describe("shellRefusal: what stays one process per command", () => {
  const json = ["--reportformat", "json"];
  const mine = ["/dev/loop0", "/dev/loop1"];
  const unconfined = { devices: undefined };
  const confined = { devices: mine };
  const withWrites = (scope: { devices: string[] | undefined }) => ({ ...scope, writes: true });
  const through: Array<[string[], ShellScope]> = [
    [["lvm", "fullreport", ...json, "--units", "b", "--nosuffix"], unconfined],
    [["lvm", "fullreport", ...json, "--devices", "/dev/loop0,/dev/loop1"], confined],
    [["vgs", ...json, "-o", "vg_name"], unconfined],
    [["pvs", ...json], unconfined],
    // Every write a plan makes (src/planner/argv.ts) but pvmove, confined or not.
    ...planWrites().flatMap((w): Array<[string[], ShellScope]> => [
      [w, withWrites(unconfined)],
      [w, withWrites(confined)],
    ]),
  ];
  it.each(through)("lets %j through (%j)", (argv, scope) => {
    expect(shellRefusal(argv, scope)).toBeUndefined();
  });

  it.each([
    [["pvcreate", "/dev/loop0"], unconfined, /writes run in the shell only with --lvm-shell-writes/],
    [["vgremove", "vg1"], confined, /writes run in the shell only with --lvm-shell-writes/],
    [["pvmove", "--interval", "1", "/dev/loop0"], withWrites(unconfined), /not a reading report/],
    [["pvcreate", "--yes", "/dev/loop0"], withWrites(unconfined), /--yes is not an option known to be safe/],
    [
      ["vgcreate", "--devices", "/dev/loop0", "vg1", "/dev/loop0"],
      withWrites(confined),
      /--devices is not an option/,
    ],
    [["lvm", "config", "--type", "current"], unconfined, /not a reading report/],
    [["pvs"], unconfined, /--reportformat json/],
    [["pvs", "--reportformat", "basic"], unconfined, /--reportformat json/],
    [["pvs", ...json, "--reportformat", "json"], unconfined, /--reportformat json/],
    [["pvs", ...json, "--foreign"], unconfined, /--foreign is not an option known to be safe/],
    [["lvm", "fullreport", ...json], confined, /only reports naming --devices with exactly its devices/],
    // A subset would stay set for the writes after it, which would then not see the rest of a group.
    [["lvm", "fullreport", ...json, "--devices", "/dev/loop0"], confined, /exactly its devices/],
    [["lvm", "fullreport", ...json, "--devices", "/dev/loop1,/dev/loop0"], confined, /exactly its devices/],
    [["lvm", "fullreport", ...json, "--devices", "/dev/loop0"], unconfined, /--devices would stay set/],
  ])("keeps %j one-shot (%j)", (argv, scope, why) => {
    expect(shellRefusal(argv, scope)).toMatch(why);
  });
});

describe("writeOutput: a write's output as lvm prints it run by itself", () => {
  const entry = (log_type: string, log_message: string, log_context = "processing") => ({
    log_type,
    log_context,
    log_message,
  });
  it("prints to stdout, errors and warnings to stderr, indented by two spaces; statuses not at all", () => {
    expect(
      writeOutput({
        retCode: 5,
        messages: [
          entry("warn", "Device read short 131072 bytes remaining"),
          entry("error", "Cannot use /dev/loop7: device is rejected by filter config"),
          entry("status", "failure"),
          entry("print", 'Physical volume "/dev/loop1" successfully created.'),
        ],
      }),
    ).toEqual({
      stdout: '  Physical volume "/dev/loop1" successfully created.\n',
      stderr:
        "  Device read short 131072 bytes remaining\n  Cannot use /dev/loop7: device is rejected by filter config\n",
    });
    expect(writeOutput({ retCode: 1, messages: [] }, "raw\n")).toEqual({ stdout: "", stderr: "raw\n" });
  });

  it("tells a prompt waiting for its answer", () => {
    expect(isPrompt("WARNING: ext4 signature detected on /dev/loop0 at offset 1080. Wipe it? [y/n]: ")).toBe(
      true,
    );
    expect(
      isPrompt("WARNING: ext4 signature detected on /dev/loop0 at offset 1080. Wipe it? [y/n]: [n]\n"),
    ).toBe(false);
    expect(isPrompt("  Device read short\n")).toBe(false);
  });
});
