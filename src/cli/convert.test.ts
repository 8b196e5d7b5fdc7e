import { capturedIO } from "../../test/support/cli/captured-io";
import YAML from "yaml";
import { COMMANDS, main } from "./main";
import { CONVERT_USAGE } from "./convert";

/** Runs the `pulumi-lvm` binary's main in-process over in-memory files and stdin. */
async function cli(argv: string[], files: Record<string, string>, stdin?: string) {
  const { io, out } = capturedIO(argv, files, stdin);
  const code = await main(io);
  return { code, stdout: out.stdout, stderr: out.stderr };
}

/** LVMS's sample LVMCluster with a second class on labelled nodes and a field it does not have. */
const LVMCLUSTER = `apiVersion: lvm.topolvm.io/v1alpha1
kind: LVMCluster
metadata:
  name: my-lvmcluster
  namespace: openshift-storage
spec:
  storage:
    deviceClasses:
      - name: vg1
        default: true
        fstype: xfs
        thinPoolConfig:
          name: thin-pool-1
          sizePercent: 90
          overprovisionRatio: 10
      - name: fast
        deviceSelector:
          paths: [/dev/disk/by-id/nvme-a]
        nodeSelector:
          nodeSelectorTerms:
            - matchExpressions:
                - { key: disk, operator: In, values: [nvme] }
        mirrorCount: 2
`;

describe("pulumi-lvm convert", () => {
  test("is registered and in the usage", async () => {
    expect(Object.keys(COMMANDS)).toContain("convert");
    const help = await cli(["--help"], {});
    expect(help.stdout).toMatch(/^ {2}convert +turn LVMS LVMCluster/m);
    expect(await cli(["convert", "--help"], {})).toEqual({ code: 0, stdout: CONVERT_USAGE, stderr: "" });
  });

  test("convert → validate: the output is valid, and what is not converted is on stderr by path", async () => {
    const converted = await cli(["convert", "lvmcluster.yaml"], { "lvmcluster.yaml": LVMCLUSTER });
    expect(converted.code).toBe(0);
    const sets = YAML.parseAllDocuments(converted.stdout).map((d) => d.toJS());
    expect(sets.map((s) => [s.kind, s.metadata.name, s.metadata.namespace])).toEqual([
      ["LVMNodeSet", "my-lvmcluster-vg1-fast", "lvm-system"],
      ["LVMNodeSet", "my-lvmcluster-vg1", "lvm-system"],
    ]);
    expect(converted.stderr).toContain(
      "pulumi-lvm convert: lvmcluster.yaml: LVMCluster/my-lvmcluster: spec.storage.deviceClasses[1].mirrorCount: not a field of LVMCluster v1alpha1 that this converter knows: not converted\n",
    );
    expect(converted.stderr).toContain("LVMCluster/my-lvmcluster: metadata.namespace: ");

    const validated = await cli(["validate", "-o", "json", "out.yaml"], { "out.yaml": converted.stdout });
    expect(validated).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(validated.stdout)).toMatchObject({ valid: true, problems: [] });
  });

  test("stdin, a kubectl List, -o json and --namespace", async () => {
    const list = YAML.stringify({ apiVersion: "v1", kind: "List", items: [YAML.parse(LVMCLUSTER)] });
    const r = await cli(["convert", "-o", "json", "--namespace", "storage", "-"], {}, list);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.kind).toBe("List");
    expect(doc.items.map((s: { metadata: { namespace: string } }) => s.metadata.namespace)).toEqual([
      "storage",
      "storage",
    ]);
    const validated = await cli(["validate", "-"], {}, r.stdout);
    expect(validated).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  test("exit codes: 1 for input that is not or not a readable LVMCluster, 2 for usage, nothing on stdout", async () => {
    const cases: Array<[string[], Record<string, string>, number, RegExp]> = [
      [["convert", "missing.yaml"], {}, 1, /missing.yaml: cannot read it: no such file/],
      [
        ["convert", "ns.yaml"],
        { "ns.yaml": "apiVersion: v1\nkind: Namespace\n" },
        1,
        /has no LVMCluster documents/,
      ],
      [
        ["convert", "bad.yaml"],
        { "bad.yaml": LVMCLUSTER.replace("overprovisionRatio: 10", "overprovisionRatio: many") },
        1,
        /LVMCluster\/my-lvmcluster: spec\.storage\.deviceClasses\[0\]\.thinPoolConfig\.overprovisionRatio: must be a number/,
      ],
      [["convert", "broken.yaml"], { "broken.yaml": "kind: [" }, 1, /broken.yaml: /],
      [["convert"], {}, 2, /no file given/],
      [["convert", "a.yaml", "b.yaml"], {}, 2, /give one file/],
      [["convert", "-o", "wide", "a.yaml"], {}, 2, /-o wide: must be one of yaml, json/],
      [["convert", "--bogus", "a.yaml"], {}, 2, /unknown argument "--bogus"/],
    ];
    for (const [argv, files, code, message] of cases) {
      const r = await cli(argv, files);
      expect({ argv, code: r.code, stdout: r.stdout }).toEqual({ argv, code, stdout: "" });
      expect(r.stderr).toMatch(message);
    }
  });
});
