import { parseShellAnswer, shellLine, shellRefusal } from "./lvm-shell-protocol";

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

describe("shellRefusal: what stays one process per command", () => {
  const json = ["--reportformat", "json"];
  it.each([
    [["lvm", "fullreport", ...json, "--units", "b", "--nosuffix"], false],
    [["lvm", "fullreport", ...json, "--devices", "/dev/loop0,/dev/loop1"], true],
    [["vgs", ...json, "-o", "vg_name"], false],
    [["pvs", ...json], false],
  ])("lets %j through (confined %s)", (argv, confined) => {
    expect(shellRefusal(argv, confined)).toBeUndefined();
  });

  it.each([
    [["pvcreate", "/dev/loop0"], false, /not a reading report/],
    [["pvmove", "--interval", "5", "/dev/loop0"], false, /not a reading report/],
    [["lvm", "config", "--type", "current"], false, /not a reading report/],
    [["pvs"], false, /--reportformat json/],
    [["pvs", "--reportformat", "basic"], false, /--reportformat json/],
    [["pvs", ...json, "--reportformat", "json"], false, /--reportformat json/],
    [["pvs", ...json, "--foreign"], false, /--foreign is not an option known to be safe/],
    [["lvm", "fullreport", ...json], true, /confined agent's shell runs only reports naming --devices/],
    [["lvm", "fullreport", ...json, "--devices", "/dev/loop0"], false, /--devices would stay set/],
  ])("keeps %j one-shot (confined %s)", (argv, confined, why) => {
    expect(shellRefusal(argv, confined)).toMatch(why);
  });
});
