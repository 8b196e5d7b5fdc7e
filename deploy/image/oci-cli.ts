/**
 * Command line of the deterministic OCI image writer (oci.ts), for images of a few files:
 *
 *   npx tsx deploy/image/oci-cli.ts --name localhost/pause:3.10 --archive pause.oci.tar \
 *     --file ./pause:/pause:0755 --entrypoint /pause --user 65535:65535
 *
 * Each --layer starts a new layer; --dir, --tar and --file add to the current one (the first layer
 * starts by itself). Prints the result as JSON (manifestDigest, archiveDigest, layers, sizes).
 */
import { parseArgs } from "node:util";
import type { LayerSource } from "./layer";
import { writeImage, type LayerSpec } from "./oci";

const USAGE = `usage: oci-cli --name REF:TAG (--archive FILE | --layout DIR) [layers] [config]
layers (in order; --layer starts the next layer):
  --dir DIR[:DEST]            a directory's contents under DEST (default /)
  --tar FILE[:DEST]           a tar file's entries under DEST
  --file SRC:DEST[:MODE]      one file, MODE in octal (default: the file's own)
  --layer                     start a new layer
config:
  --entrypoint ARG            repeat for each argument
  --cmd ARG                   repeat for each argument
  --user UID:GID              default root
  --env NAME=VALUE            repeatable
  --label KEY=VALUE           repeatable (also a manifest annotation)
  --workdir DIR               default /
  --source-date-epoch N       default $SOURCE_DATE_EPOCH, else 0
`;

export function parseCommandLine(argv: readonly string[]) {
  const { values, tokens } = parseArgs({
    args: [...argv],
    tokens: true,
    options: {
      name: { type: "string" },
      archive: { type: "string" },
      layout: { type: "string" },
      dir: { type: "string", multiple: true },
      tar: { type: "string", multiple: true },
      file: { type: "string", multiple: true },
      layer: { type: "boolean", multiple: true },
      entrypoint: { type: "string", multiple: true },
      cmd: { type: "string", multiple: true },
      user: { type: "string" },
      env: { type: "string", multiple: true },
      label: { type: "string", multiple: true },
      workdir: { type: "string" },
      "source-date-epoch": { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help) return undefined;
  if (!values.name) throw new Error("--name is required");
  if (!values.archive && !values.layout) throw new Error("--archive or --layout is required");
  const layers: LayerSource[][] = [[]];
  for (const token of tokens) {
    if (token.kind !== "option") continue;
    const value = token.value ?? "";
    const [first = "", second, third] = value.split(":");
    if (token.name === "layer") {
      if (layers[layers.length - 1]!.length) layers.push([]);
    } else if (token.name === "dir") layers[layers.length - 1]!.push({ dir: first, to: second ?? "/" });
    else if (token.name === "tar") layers[layers.length - 1]!.push({ tar: first, to: second ?? "/" });
    else if (token.name === "file") {
      if (!second) throw new Error(`--file ${value}: expected SRC:DEST[:MODE]`);
      const mode = third === undefined ? undefined : parseInt(third, 8);
      if (mode !== undefined && !(mode >= 0 && mode <= 0o7777)) throw new Error(`--file ${value}: bad mode`);
      layers[layers.length - 1]!.push({ file: first, to: second, ...(mode === undefined ? {} : { mode }) });
    }
  }
  const pairs = (list: string[] | undefined, flag: string) =>
    Object.fromEntries(
      (list ?? []).map((item) => {
        const at = item.indexOf("=");
        if (at <= 0) throw new Error(`--${flag} ${item}: expected KEY=VALUE`);
        return [item.slice(0, at), item.slice(at + 1)];
      }),
    );
  pairs(values.env, "env");
  const epoch = values["source-date-epoch"];
  return {
    name: values.name,
    ...(values.archive ? { archive: values.archive } : {}),
    ...(values.layout ? { layoutDir: values.layout } : {}),
    ...(epoch === undefined ? {} : { sourceDateEpoch: Number(epoch) }),
    layers: layers.filter((sources) => sources.length).map((sources): LayerSpec => ({ sources })),
    config: {
      ...(values.entrypoint ? { entrypoint: values.entrypoint } : {}),
      ...(values.cmd ? { cmd: values.cmd } : {}),
      ...(values.user ? { user: values.user } : {}),
      ...(values.env ? { env: values.env } : {}),
      ...(values.workdir ? { workingDir: values.workdir } : {}),
      ...(values.label ? { labels: pairs(values.label, "label") } : {}),
    },
  };
}

if (require.main === module) {
  (async () => {
    const spec = parseCommandLine(process.argv.slice(2));
    if (!spec) {
      process.stdout.write(USAGE);
      return;
    }
    if (spec.layers.length === 0) throw new Error("no layers: give --dir, --tar or --file");
    const result = await writeImage(spec);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  })().catch((error: unknown) => {
    process.stderr.write(`oci-cli: ${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    process.exitCode = 2;
  });
}
