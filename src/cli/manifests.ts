import { mkdir, readdir, writeFile } from "node:fs/promises";
import * as path from "node:path";
import YAML from "yaml";
import { ValidationError, type ValidationProblem } from "../api";
import { validateSystem, type LvmSystemArgs } from "../components/lvm-system-args";
import { DEFAULT_NAMESPACE } from "../components/system-plan";
import { manifestsOf, systemParts } from "../components/system-manifests";
import { isPlainObject } from "../components/validate-args";
import type { CliIO } from "../process/subcommand";
import { DEFAULT_IMAGE, PACKAGE_VERSION } from "../version";
import { parseCommandLine } from "./args";
import { EXIT, exitCodeHelp, USAGE_EXIT } from "./exit-codes";
import { manifestFiles, manifestsHeader, manifestsStream } from "./manifests-render";

export const DEFAULT_SYSTEM_NAME = "lvm";

export const MANIFESTS_USAGE = `usage: pulumi-lvm manifests [--name NAME] [--namespace NS] [--image IMAGE] [--values FILE] [-o DIR]

Prints the objects LvmSystem deploys as plain YAML, for clusters without Pulumi: apply them with
\`kubectl apply --server-side -f -\`, or commit them for Argo CD or Flux. The same builders as
LvmSystem make them: the lvm.topolvm.io CRDs, the namespace, RBAC, the agents' DaemonSet, the
operator's Deployment, its admission webhook, NetworkPolicies and (with monitoring) the Prometheus
Operator's objects. Not TopoLVM: install it from its own Helm chart. The output is sorted, so two
runs over the same input print the same bytes.

  --name NAME        LvmSystem's name, the prefix of the objects' names (default: ${DEFAULT_SYSTEM_NAME})
  --namespace NS     the namespace (default: ${DEFAULT_NAMESPACE}); wins over the values' namespace
  --image IMAGE      the agents' and the operator's image (default: ${DEFAULT_IMAGE});
                     wins over the values' agentImage
  --values FILE      LvmSystem's args as YAML or JSON (- for standard input), checked as LvmSystem
                     checks them, e.g. agentResources, tolerations, nodeSelector, operator,
                     networkPolicies, monitoring, certificates (docs/components.md#lvmsystem)
  -o, --output DIR   one file per object in DIR, which must be empty or absent (default: one
                     stream on standard output)

${exitCodeHelp(["OK", "INVALID", "USAGE"], {
  OK: "the manifests were printed or written",
  INVALID: "invalid values (a line each: <file>: <field path>: <message>), or DIR not empty or not writable",
})}
`;

const FLAGS = {
  name: { type: "string", value: "name" },
  namespace: { type: "string", value: "namespace" },
  image: { type: "string", value: "image" },
  values: { type: "string", value: "file" },
  output: { type: "string", short: "o", value: "directory" },
} as const;

type Flags = { name?: string; namespace?: string; image?: string; values?: string; output?: string };

/** The directory calls `-o DIR` makes; tests pass their own. */
export interface ManifestsFs {
  readdir(dir: string): Promise<string[]>;
  mkdir(dir: string): Promise<void>;
  writeFile(file: string, text: string): Promise<void>;
}

const nodeFs: ManifestsFs = {
  readdir: (dir) => readdir(dir),
  mkdir: async (dir) => void (await mkdir(dir, { recursive: true })),
  writeFile: (file, text) => writeFile(file, text),
};

/** `pulumi-lvm manifests`: LvmSystem's objects (systemParts) as YAML, without Pulumi. */
export async function run(io: CliIO, fs: ManifestsFs = nodeFs): Promise<number> {
  const line = parseCommandLine(io.argv, FLAGS);
  if (line.kind === "help") return (io.stdout(MANIFESTS_USAGE), EXIT.OK);
  if (line.kind === "error") {
    io.stderr(`pulumi-lvm manifests: ${line.message}\n\n${MANIFESTS_USAGE}`);
    return USAGE_EXIT;
  }
  const flags = line.values as Flags;
  const name = flags.name ?? DEFAULT_SYSTEM_NAME;
  const fail = (lines: string[]) => (
    io.stderr(lines.map((l) => `pulumi-lvm manifests: ${l}\n`).join("")),
    EXIT.INVALID
  );
  const values = await readValues(io, flags.values);
  if ("error" in values) return fail([values.error]);
  const args: LvmSystemArgs = {
    ...values.args,
    ...(flags.namespace ? { namespace: flags.namespace } : {}),
    ...(flags.image ? { agentImage: flags.image } : {}),
  };
  const rendered = render(name, args, flags);
  if ("error" in rendered) return fail([rendered.error]);
  if ("problems" in rendered)
    return fail(
      rendered.problems.map(
        (p) => `${p.path.startsWith("--") ? "" : `${values.file}: `}${p.path}: ${p.message}`,
      ),
    );
  if (args.retainCrdsOnDelete !== undefined)
    io.stderr(
      "pulumi-lvm manifests: retainCrdsOnDelete is ignored: only your tool deletes the CRDs here (with them every LVMNodeSet and LVMNode)\n",
    );
  const header = manifestsHeader(PACKAGE_VERSION, name);
  if (!flags.output) return (io.stdout(manifestsStream(header, rendered.objects)), EXIT.OK);
  try {
    const there = await fs.readdir(flags.output).catch((e: NodeJS.ErrnoException) => {
      if (e.code === "ENOENT") return [];
      throw e;
    });
    if (there.length > 0)
      return fail([
        `${flags.output} is not empty: write into an empty directory (files of objects no longer rendered would stay behind)`,
      ]);
    await fs.mkdir(flags.output);
    const files = manifestFiles(header, rendered.objects);
    for (const f of files) await fs.writeFile(path.join(flags.output, f.name), f.text);
    io.stderr(`wrote ${files.length} files to ${flags.output}\n`);
    return EXIT.OK;
  } catch (e) {
    return fail([`${flags.output}: ${(e as Error).message}`]);
  }
}

/** The values file as LvmSystem's args: a YAML or JSON mapping; none given: {}. */
async function readValues(
  io: CliIO,
  file: string | undefined,
): Promise<{ args: LvmSystemArgs; file: string } | { error: string }> {
  if (file === undefined) return { args: {}, file: "(flags)" };
  const shown = file === "-" ? "<stdin>" : file;
  let text: string;
  try {
    if (file === "-" && !io.readStdin) return { error: "standard input is not available for --values -" };
    text = file === "-" ? await io.readStdin!() : await io.readFile(file);
  } catch (e) {
    return { error: `${shown}: ${(e as Error).message}` };
  }
  const doc = YAML.parseDocument(text);
  if (doc.errors.length) return { error: `${shown}: invalid YAML: ${doc.errors[0]!.message}` };
  const value: unknown = doc.toJSON() ?? {};
  if (!isPlainObject(value)) return { error: `${shown}: must be a mapping of LvmSystem's args` };
  return { args: value as LvmSystemArgs, file: shown };
}

/**
 * The objects, or LvmSystem's own problems with the args (paths without its `args.` prefix; those
 * a flag set name the flag). TopoLVM is refused: it is not rendered here.
 */
function render(
  name: string,
  args: LvmSystemArgs,
  flags: Flags,
): { objects: ReturnType<typeof manifestsOf> } | { problems: ValidationProblem[] } | { error: string } {
  if (args.topolvm !== undefined)
    return {
      problems: [
        {
          path: "topolvm",
          message:
            "not rendered by manifests: install TopoLVM from its own Helm chart, its lvmd on the agents' nodes (docs/cli.md#manifests)",
        },
      ],
    };
  try {
    const { crds } = validateSystem(name, args);
    return { objects: [...crds, ...manifestsOf(systemParts(name, args))] };
  } catch (e) {
    // The CRDs could not be read (crdDirectory, or this package's deploy/crds).
    if (!(e instanceof ValidationError)) return { error: (e as Error).message };
    return {
      problems: e.problems.map((p) => ({ ...p, path: flagPath(p.path.replace(/^args\.?/, ""), flags) })),
    };
  }
}

/** A problem's path as the user gave the value: a flag, or the field of the values file. */
function flagPath(field: string, flags: Flags): string {
  if (field === "name") return "--name";
  if (field === "namespace" && flags.namespace) return "--namespace";
  if (field === "agentImage" && flags.image) return "--image";
  return field || "(root)";
}
