import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { chartSourceProblems, topolvmChartSource, TOPOLVM_REPOSITORY } from "./topolvm-chart";

describe("topolvmChartSource", () => {
  test.each([
    [
      "the official repository by default",
      { chartVersion: "17.1.0" },
      { chart: "topolvm", version: "17.1.0", repositoryOpts: { repo: TOPOLVM_REPOSITORY } },
    ],
    [
      "an HTTP mirror",
      { chartVersion: "17.1.0", repository: "https://charts.example.com/topolvm" },
      { chart: "topolvm", version: "17.1.0", repositoryOpts: { repo: "https://charts.example.com/topolvm" } },
    ],
    [
      "an OCI registry: the chart is <path>/topolvm, no repository index",
      { chartVersion: "17.1.0", repository: "oci://registry.example.com/charts/" },
      { chart: "oci://registry.example.com/charts/topolvm", version: "17.1.0" },
    ],
    [
      "a chart on disk, as given",
      { chartVersion: "17.1.0", chartPath: "./charts/topolvm" },
      { chart: "./charts/topolvm" },
    ],
  ])("%s", (_, args, expected) => {
    expect(topolvmChartSource(args)).toEqual(expected);
  });
});

describe("chartSourceProblems", () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "topolvm-chart-"));
    const chart = (name: string, yaml: string) => {
      fs.mkdirSync(path.join(dir, name));
      fs.writeFileSync(path.join(dir, name, "Chart.yaml"), yaml);
      return path.join(dir, name);
    };
    chart("good", "apiVersion: v2\nname: topolvm\nversion: 17.1.0\nappVersion: 0.41.0\n");
    chart("older", "apiVersion: v2\nname: topolvm\nversion: 15.7.1\n");
    chart("other", "apiVersion: v2\nname: cert-manager\nversion: 17.1.0\n");
    fs.mkdirSync(path.join(dir, "empty"));
    fs.writeFileSync(path.join(dir, "topolvm-17.1.0.tgz"), "");
    fs.writeFileSync(path.join(dir, "notes.txt"), "");
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const at = "args.topolvm";
  const problems = (chartPath: string, extra: object = {}) =>
    chartSourceProblems({ chartVersion: "17.1.0", chartPath: path.join(dir, chartPath), ...extra }, at);

  test("no chartPath: nothing to check on disk", () => {
    expect(chartSourceProblems({ chartVersion: "17.1.0", repository: "oci://r/c" }, at)).toEqual([]);
  });
  test("TopoLVM's chart directory at the pinned version, or a packaged chart", () => {
    expect(problems("good")).toEqual([]);
    expect(chartSourceProblems({ chartVersion: "v17.1.0", chartPath: path.join(dir, "good") }, at)).toEqual(
      [],
    );
    expect(problems("topolvm-17.1.0.tgz")).toEqual([]);
  });
  test("a chart directory at another version than the pin is refused, naming both", () => {
    expect(problems("older")).toEqual([
      {
        path: "args.topolvm.chartPath",
        message: expect.stringMatching(/"15\.7\.1", but chartVersion pins "17\.1\.0"/),
      },
    ]);
  });
  test("another chart, a missing path, a directory without Chart.yaml, a plain file", () => {
    expect(problems("other")).toEqual([
      {
        path: "args.topolvm.chartPath",
        message: expect.stringMatching(/names the chart "cert-manager", not "topolvm"/),
      },
    ]);
    expect(problems("missing")).toEqual([
      { path: "args.topolvm.chartPath", message: expect.stringMatching(/cannot read .*missing: ENOENT/) },
    ]);
    expect(problems("empty")).toEqual([
      {
        path: "args.topolvm.chartPath",
        message: expect.stringMatching(/cannot read the chart's Chart.yaml/),
      },
    ]);
    expect(problems("notes.txt")).toEqual([
      {
        path: "args.topolvm.chartPath",
        message: expect.stringMatching(/neither a chart directory nor a packaged chart/),
      },
    ]);
  });
  test("chartPath and repository together are refused", () => {
    expect(problems("good", { repository: "https://charts.example.com" })).toEqual([
      { path: "args.topolvm.chartPath", message: expect.stringMatching(/either chartPath .* or repository/) },
    ]);
  });
});
