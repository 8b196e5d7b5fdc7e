import YAML from "yaml";
import { LvmSystem, LVM_SYSTEM_TYPE, type LvmSystemArgs } from "../components/lvm-system";
import { DEFAULT_IMAGE } from "../version";
import { runCaptured } from "../../test/support/cli/captured-io";
import { installMocks, runProgram } from "../../test/support/components/pulumi-mocks";
import { run, type ManifestsFs } from "./manifests";

/*
 * The objects `pulumi-lvm manifests` prints are the objects LvmSystem registers for the same args
 * (under Pulumi's mocks), one for one and field for field, so the two ways to deploy cannot drift.
 */

type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } } & Record<
  string,
  unknown
>;

const cli = (argv: string[], files: Record<string, string> = {}, stdin?: string) =>
  runCaptured((io) => run(io), argv, files, stdin);

/** The documents of a `manifests` stream (the header is a comment). */
function documents(stream: string): Obj[] {
  return YAML.parseAllDocuments(stream).map((d) => {
    expect(d.errors).toEqual([]);
    return d.toJSON() as Obj;
  });
}

const key = (o: Obj) => `${o.kind} ${o.metadata.namespace ?? ""}/${o.metadata.name}`;

/** What LvmSystem registers, as the API server would get it: Pulumi's own annotations left out. */
async function componentObjects(name: string, args: LvmSystemArgs): Promise<Map<string, Obj>> {
  const recorded = await runProgram(() => new LvmSystem(name, args));
  const out = new Map<string, Obj>();
  for (const r of recorded.filter((r) => r.type !== LVM_SYSTEM_TYPE)) {
    const obj = structuredClone(r.inputs) as Obj & { metadata: { annotations?: Record<string, string> } };
    const annotations = Object.entries(obj.metadata.annotations ?? {}).filter(
      ([k]) => !k.startsWith("pulumi.com/"),
    );
    if (annotations.length) obj.metadata.annotations = Object.fromEntries(annotations);
    else delete obj.metadata.annotations;
    out.set(key(obj), obj);
  }
  return out;
}

beforeAll(installMocks);

const VARIANTS: Array<[string, LvmSystemArgs]> = [
  ["the defaults", {}],
  [
    "resources, placement and monitoring",
    {
      agentResources: { requests: { cpu: "50m", memory: "128Mi" }, limits: { memory: "512Mi" } },
      nodeSelector: { "storage.example.com/disks": "true" },
      tolerations: [{ key: "storage", operator: "Exists", effect: "NoSchedule" }],
      priorityClassName: "system-node-critical",
      operator: {
        resources: { limits: { memory: "512Mi" } },
        nodeSelector: { "node-role.kubernetes.io/control-plane": "" },
        tolerations: [{ key: "node-role.kubernetes.io/control-plane", operator: "Exists" }],
        args: ["--resync", "10m"],
      },
      monitoring: { serviceMonitor: true, rules: true, labels: { release: "prometheus" } },
      networkPolicies: { controlPlane: { cidrs: ["10.0.0.0/28"] }, monitoringNamespaces: ["prometheus"] },
    },
  ],
  [
    "cert-manager and cluster-mode subjects",
    {
      certificates: { issuerRef: { name: "cluster-ca", kind: "ClusterIssuer" }, validityDays: 30 },
      clusterModeSubjects: [
        { kind: "Group", name: "platform-deployers" },
        { kind: "ServiceAccount", name: "ci" },
      ],
    },
  ],
  [
    "no operator, plain HTTP, no NetworkPolicies",
    { operator: { enabled: false }, agentPlainHttp: true, networkPolicies: { enabled: false } },
  ],
  [
    "admission off, the agents' own Secret, another port and namespace",
    {
      namespace: "storage",
      agentPort: 9000,
      agentTlsSecretName: "my-agent-tls",
      operator: { admission: { enabled: false }, providerReady: false },
    },
  ],
];

describe.each(VARIANTS)("with %s", (_, args) => {
  test("prints every object LvmSystem registers, each exactly as LvmSystem builds it", async () => {
    const r = await cli(["--name", "store", "--values", "values.yaml"], {
      "values.yaml": YAML.stringify(args),
    });
    expect(r).toMatchObject({ code: 0, stderr: "" });
    const printed = documents(r.stdout);
    const component = await componentObjects("store", args);
    expect(printed.map(key).sort()).toEqual([...component.keys()].sort());
    for (const o of printed) expect(o).toEqual(component.get(key(o)));
  });
});

describe("the default output", () => {
  let stdout: string;
  beforeAll(async () => {
    const r = await cli([]);
    expect(r).toMatchObject({ code: 0, stderr: "" });
    stdout = r.stdout;
  });

  test("holds the system's kinds, the namespace and the CRDs first, and no TopoLVM", () => {
    const kinds = documents(stdout).map((o) => o.kind);
    expect(kinds.slice(0, 3)).toEqual(["Namespace", "CustomResourceDefinition", "CustomResourceDefinition"]);
    expect(new Set(kinds)).toEqual(
      new Set([
        "Namespace",
        "CustomResourceDefinition",
        "ServiceAccount",
        "ClusterRole",
        "Role",
        "ClusterRoleBinding",
        "RoleBinding",
        "Service",
        "Deployment",
        "DaemonSet",
        "PodDisruptionBudget",
        "NetworkPolicy",
        "ValidatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
      ]),
    );
    expect(stdout).not.toMatch(/topolvm-(controller|node|lvmd)/);
  });

  test("is LvmSystem's defaults: namespace lvm-system, objects named lvm-*, the package's image", async () => {
    const objects = documents(stdout);
    expect(objects[0]!.metadata.name).toBe("lvm-system");
    const ds = objects.find((o) => o.kind === "DaemonSet")!;
    expect(ds.metadata).toMatchObject({ name: "lvm-agent", namespace: "lvm-system" });
    expect(JSON.stringify(ds)).toContain(`"image":"${DEFAULT_IMAGE}"`);
  });

  test("says what it leaves out, and names no caBundle (the operator sets it)", () => {
    expect(stdout.split("---\n")[0]).toMatch(/^# .*\n# .*kubectl apply --server-side/);
    expect(stdout.split("---\n")[0]).toContain("Not included: TopoLVM");
    const webhook = documents(stdout).find((o) => o.kind === "ValidatingWebhookConfiguration")!;
    expect(JSON.stringify(webhook)).not.toContain("caBundle");
  });

  test("is the same bytes every time", async () => {
    expect((await cli([])).stdout).toBe(stdout);
  });
});

test("--namespace and --image win over the values, as LvmSystem's namespace and agentImage", async () => {
  const r = await cli(
    ["--namespace", "disks", "--image", "registry.example.com/pulumi-lvm:1.2.3", "--values", "-"],
    {},
    "namespace: other\n",
  );
  expect(r.code).toBe(0);
  const component = await componentObjects("lvm", {
    namespace: "disks",
    agentImage: "registry.example.com/pulumi-lvm:1.2.3",
  });
  for (const o of documents(r.stdout)) expect(o).toEqual(component.get(key(o)));
  expect(r.stdout).not.toContain(DEFAULT_IMAGE);
});

describe("invalid input: exit 1, a line per problem with its file and field path, nothing on stdout", () => {
  test("values LvmSystem refuses", async () => {
    const values =
      "agentResources: { requests: { memory: 1Gb } }\noperator: { tolerations: [{ operator: Sometimes }] }\nbogus: 1\n";
    expect(await cli(["--values", "v.yaml"], { "v.yaml": values })).toEqual({
      code: 1,
      stdout: "",
      stderr: [
        'pulumi-lvm manifests: v.yaml: agentResources.requests.memory: must be a quantity such as "64Mi" or "20m" (got "1Gb")',
        'pulumi-lvm manifests: v.yaml: operator.tolerations[0].operator: must be one of "Exists", "Equal" (got "Sometimes")',
        "pulumi-lvm manifests: v.yaml: bogus: unknown field",
        "",
      ].join("\n"),
    });
  });

  test("a flag's problem names the flag", async () => {
    const r = await cli(["--namespace", "Not_A_Label"]);
    expect(r).toMatchObject({ code: 1, stdout: "" });
    expect(r.stderr).toMatch(/^pulumi-lvm manifests: --namespace: must be a DNS-1123 label/);
  });

  test.each([
    [
      "topolvm",
      "topolvm: { chartVersion: 15.7.1 }\n",
      /v\.yaml: topolvm: not rendered by manifests: install TopoLVM from its own Helm chart/,
    ],
    ["a list", "- a\n", /v\.yaml: must be a mapping of LvmSystem's args/],
    ["bad YAML", "a: [\n", /v\.yaml: invalid YAML/],
  ])("%s", async (_, values, message) => {
    const r = await cli(["--values", "v.yaml"], { "v.yaml": values });
    expect(r).toMatchObject({ code: 1, stdout: "" });
    expect(r.stderr).toMatch(message);
  });

  test("a values file that cannot be read", async () => {
    const r = await cli(["--values", "missing.yaml"]);
    expect(r).toMatchObject({ code: 1, stdout: "" });
    expect(r.stderr).toMatch(/^pulumi-lvm manifests: missing\.yaml: ENOENT/);
  });
});

test("retainCrdsOnDelete is accepted and said to mean nothing here", async () => {
  const r = await cli(["--values", "v.yaml"], { "v.yaml": "retainCrdsOnDelete: false\n" });
  expect(r.code).toBe(0);
  expect(r.stderr).toMatch(/retainCrdsOnDelete is ignored/);
  expect(r.stdout).toBe((await cli([])).stdout);
});

test.each([[["--bogus"]], [["stray"]], [["--values"]]])("%j is a usage error (exit 2)", async (argv) => {
  expect(await cli(argv)).toMatchObject({
    code: 2,
    stdout: "",
    stderr: expect.stringMatching(/usage: pulumi-lvm manifests/),
  });
});

describe("-o DIR", () => {
  /** A directory in memory: what was listed, made and written. */
  function memoryFs(existing: string[] = []): ManifestsFs & { files: Map<string, string> } {
    const files = new Map<string, string>();
    return {
      files,
      readdir: async () => existing,
      mkdir: async () => undefined,
      writeFile: async (file, text) => void files.set(file, text),
    };
  }
  const runWith = (fs: ManifestsFs, argv: string[]) => runCaptured((io) => run(io, fs), argv);

  test("one file per object, named in apply order, each with the header, the stream's objects", async () => {
    const fs = memoryFs();
    const r = await runWith(fs, ["-o", "out"]);
    expect(r).toMatchObject({ code: 0, stdout: "" });
    const names = [...fs.files.keys()];
    expect(names[0]).toBe("out/00-namespace-lvm-system.yaml");
    expect(names).toContain("out/01-customresourcedefinition-lvmnodesets.lvm.topolvm.io.yaml");
    expect(names).toContain("out/10-daemonset-lvm-agent.yaml");
    expect([...names].sort()).toEqual(names);
    expect(r.stderr).toBe(`wrote ${names.length} files to out\n`);
    const stream = (await cli([])).stdout;
    expect([...fs.files.values()].flatMap(documents)).toEqual(documents(stream));
    for (const text of fs.files.values()) expect(text).toMatch(/^# pulumi-lvm .*\n(# .*\n)+apiVersion: /);
  });

  test("a directory that holds files is refused: an object no longer rendered would stay behind", async () => {
    const fs = memoryFs(["old.yaml"]);
    const r = await runWith(fs, ["-o", "out"]);
    expect(r).toMatchObject({ code: 1, stdout: "", stderr: expect.stringMatching(/out is not empty/) });
    expect(fs.files.size).toBe(0);
  });
});
