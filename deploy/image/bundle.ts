/**
 * A self-contained install of the pulumi-lvm npm package: exactly what `npm pack` publishes,
 * unpacked, plus its production dependencies at the versions in this repository's package-lock.json.
 * Runs with Node.js 20 and nothing else: `<dir>/bin/pulumi-lvm agent …`. Used for the container image
 * and for installing the agent or operator on a host without a Pulumi program.
 *
 * The Pulumi SDKs (@pulumi/pulumi, @pulumi/kubernetes) are peer dependencies: a Pulumi program brings
 * its own (one copy of the SDK per program), and the agent and operator never load them, so the
 * bundle leaves them out.
 *
 * Interface (stable):
 *   buildBundle({ repoDir, outDir }) → { dir, tarball, tarballDigest, version }
 *     `npm pack` in repoDir (its prepare script compiles TypeScript), unpacked into outDir
 *     (replaced), then `npm install --omit=dev --omit=peer --ignore-scripts --no-save` there with
 *     the repository's lock file. outDir/bin/pulumi-lvm is the CLI.
 *   CLI: `npx tsx deploy/image/bundle.ts OUT_DIR`.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface BundleOptions {
  /** The repository (package.json, package-lock.json). @example "." */
  readonly repoDir: string;
  /** Where the bundle goes; replaced. @example "/opt/pulumi-lvm" */
  readonly outDir: string;
  /** Use this tarball instead of running `npm pack`. @default pack repoDir */
  readonly tarball?: string;
  /** Progress lines. @default silent */
  readonly log?: (line: string) => void;
}

export interface Bundle {
  readonly dir: string;
  /** The `npm pack` tarball the bundle was made from (left in a temporary directory). */
  readonly tarball: string;
  readonly tarballDigest: string;
  readonly version: string;
}

/** Path of the CLI inside a bundle. */
export const BUNDLE_CLI = "bin/pulumi-lvm";

export async function buildBundle(options: BundleOptions): Promise<Bundle> {
  const repoDir = resolve(options.repoDir);
  const outDir = resolve(options.outDir);
  const log = options.log ?? (() => undefined);
  const tarball = options.tarball ?? (await pack(repoDir, log));
  const tarballDigest = `sha256:${createHash("sha256")
    .update(await readFile(tarball))
    .digest("hex")}`;
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  await run("tar", ["-xzf", tarball, "-C", outDir, "--strip-components=1", "--no-same-owner"]);
  const pkg = JSON.parse(await readFile(join(outDir, "package.json"), "utf8")) as {
    version: string;
    bin: Record<string, string>;
  };
  await copyFile(join(repoDir, "package-lock.json"), join(outDir, "package-lock.json"));
  // Not `npm ci`: its strict check refuses a lock file without other platforms' optional binaries,
  // which the registry here does not serve (see .ci/run). `npm install --no-save` installs exactly
  // the versions in the lock file and leaves it as it is.
  log(`bundle: npm install --omit=dev --omit=peer in ${outDir}`);
  await npm(
    ["install", "--omit=dev", "--omit=peer", "--ignore-scripts", "--no-save", "--no-audit", "--no-fund"],
    outDir,
  );
  await mkdir(join(outDir, "bin"));
  await symlink(`../${pkg.bin["pulumi-lvm"]!.replace(/^\.\//, "")}`, join(outDir, BUNDLE_CLI));
  return { dir: outDir, tarball, tarballDigest, version: pkg.version };
}

async function pack(repoDir: string, log: (line: string) => void): Promise<string> {
  const dest = await mkdtemp(join(tmpdir(), "pulumi-lvm-pack-"));
  log(`bundle: npm pack (compiles TypeScript) → ${dest}`);
  const { stdout } = await npm(["pack", "--json", "--pack-destination", dest], repoDir);
  // npm prints the prepare script's output before the JSON; the JSON is the last top-level array.
  const json = stdout.slice(stdout.lastIndexOf("\n[") + 1);
  const [result] = JSON.parse(json.startsWith("[") ? json : stdout) as Array<{ filename: string }>;
  return join(dest, result!.filename);
}

async function npm(args: string[], cwd: string) {
  try {
    return await run("npm", args, {
      cwd,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, npm_config_loglevel: "warn" },
    });
  } catch (error) {
    const e = error as { code?: number; stderr?: string };
    throw new Error(`bundle: npm ${args.join(" ")} in ${cwd} failed (exit ${e.code}): ${e.stderr ?? error}`);
  }
}

if (require.main === module) {
  const outDir = process.argv[2];
  if (!outDir) {
    process.stderr.write("usage: bundle.ts OUT_DIR\n");
    process.exit(2);
  }
  buildBundle({
    repoDir: resolve(__dirname, "../.."),
    outDir,
    log: (line) => process.stderr.write(`${line}\n`),
  }).then(
    (bundle) => process.stdout.write(`${JSON.stringify(bundle, null, 2)}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
