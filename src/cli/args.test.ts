import { parseCommandLine, type Flag } from "./args";

const FLAGS: Record<string, Flag> = {
  inventory: { type: "string", value: "file" },
  label: { type: "string", multiple: true },
  verbose: { type: "boolean", short: "v" },
};

describe("parseCommandLine", () => {
  test.each<[string[], object]>([
    [
      ["--inventory", "a.json", "--label=x=1", "--label", "y=2", "-v"],
      { kind: "run", values: { inventory: "a.json", label: ["x=1", "y=2"], verbose: true }, positionals: [] },
    ],
    [["--inventory=-"], { kind: "run", values: { inventory: "-" } }],
    [["--bogus"], { kind: "error", message: 'unknown argument "--bogus"' }],
    [["-x"], { kind: "error", message: 'unknown argument "-x"' }],
    [["--toString"], { kind: "error", message: 'unknown argument "--toString"' }],
    [["--inventory"], { kind: "error", message: "--inventory needs a file" }],
    [["--inventory="], { kind: "error", message: "--inventory needs a file" }],
    [["--inventory", "--verbose"], { kind: "error", message: "--inventory needs a file" }],
    [["--label"], { kind: "error", message: "--label needs a value" }],
    [["--verbose=yes"], { kind: "error", message: "--verbose takes no value" }],
    [["file.yaml"], { kind: "error", message: 'unexpected argument "file.yaml"' }],
    [["--bogus", "--help"], { kind: "help" }],
    [["-h"], { kind: "help" }],
  ])("%j", (argv, expected) => {
    expect(parseCommandLine(argv, FLAGS)).toMatchObject(expected);
  });

  test("positionals when the command takes them; -- ends the flags", () => {
    expect(
      parseCommandLine(["a.yaml", "-v", "--", "-v.yaml", "--help"], FLAGS, { positionals: true }),
    ).toEqual({
      kind: "run",
      values: { verbose: true },
      positionals: ["a.yaml", "-v.yaml", "--help"],
    });
  });
});
