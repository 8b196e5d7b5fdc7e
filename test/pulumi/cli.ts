/**
 * The real Pulumi CLI for the engine end-to-end tier: where test/pulumi/install.sh puts it, a loud
 * failure when it is not there, and a throw-away workspace (file backend, PULUMI_HOME, project
 * file, stack) to run it in. See docs/testing-pulumi.md.
 */
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as YAML from "yaml";

const HERE = __dirname;
export const INSTALL_SCRIPT = path.join(HERE, "install.sh");
/** The program the tests run (its own package root: see its package.json). */
export const PROGRAM_DIR = path.join(HERE, "program");
export const BINARIES = [
  "pulumi",
  "pulumi-language-nodejs",
  "pulumi-language-python",
  "pulumi-language-python-exec",
  "pulumi-resource-pulumi-nodejs",
] as const;

/** The CLI version test/pulumi/go/cli/go.mod builds (the cache is keyed by it). */
export function pulumiVersion(): string {
  const goMod = fs.readFileSync(path.join(HERE, "go", "cli", "go.mod"), "utf8");
  const m = /^\s*(?:require\s+)?github\.com\/pulumi\/pulumi\/pkg\/v3\s+(v\S+)/m.exec(goMod);
  if (!m)
    throw new Error("cannot read the github.com/pulumi/pulumi/pkg/v3 version from test/pulumi/go/cli/go.mod");
  return m[1]!;
}

/** $PULUMI_LVM_CACHE/pulumi/<version>/bin, as test/pulumi/install.sh lays it out. */
export function pulumiBinDir(): string {
  const cache = process.env.PULUMI_LVM_CACHE || path.join(os.homedir(), ".cache", "pulumi-lvm");
  return path.join(cache, "pulumi", pulumiVersion(), "bin");
}

/** Throws, saying how to build them, unless every binary of the tier is in `dir`. Never skips. */
export function requirePulumiBinaries(dir = pulumiBinDir()): void {
  const missing = BINARIES.filter((name) => {
    try {
      fs.accessSync(path.join(dir, name), fs.constants.X_OK);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length === 0) return;
  const rel = path.relative(process.cwd(), INSTALL_SCRIPT) || INSTALL_SCRIPT;
  throw new Error(
    [
      "",
      "==================================================================================",
      `Pulumi engine binaries are missing: ${missing.join(", ")}`,
      `  looked in: ${dir}`,
      `  run:       bash ${rel}`,
      "  (builds the Pulumi CLI and its Node.js and Python language hosts from source with Go;",
      "   a few minutes cold, instant once cached; test/setup.sh runs it)",
      "==================================================================================",
    ].join("\n"),
  );
}

export interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout and stderr together, for assertions on what a person would read. */
  readonly output: string;
}

/**
 * A stack of the program in a scratch directory: a file backend (`pulumi login file://...`), its
 * own PULUMI_HOME, and a project file whose `main` points at the program, so that the stack's
 * config file (Pulumi.<stack>.yaml) is written here and never into the repository.
 */
export class PulumiWorkspace {
  readonly dir: string;
  readonly backend: string;
  readonly home: string;
  /** Where the project file and the stack config live. */
  readonly project: string;
  /** The program's directory (or file): the project file's `main`, absolute. */
  readonly main: string;
  /** Every command's output so far, to check that no secret ever reached the terminal. */
  readonly transcript: string[] = [];
  private readonly env: NodeJS.ProcessEnv;

  constructor(
    readonly stack: string,
    readonly passphrase: string,
    opts: {
      binDir?: string;
      root?: string;
      programDir?: string;
      projectFile?: string;
      /**
       * Plugin directories in the engine's plugin-cache layout (`<kind>-<name>-v<version>`, e.g.
       * kubernetes-plugin.ts's), made available in this workspace's PULUMI_HOME/plugins, where the
       * engine looks for the exact version a program's SDK asks for (it never downloads here).
       */
      plugins?: readonly string[];
      /**
       * Copy the files of the program's directory into the project directory and run them there (the
       * project file without `main`): for a program whose tooling writes beside it (a Python
       * program's virtualenv and generated SDKs), so that nothing is written into the repository.
       */
      copyProgram?: boolean;
      /** More environment variables for every command. */
      env?: Record<string, string>;
    } = {},
  ) {
    const binDir = opts.binDir ?? pulumiBinDir();
    requirePulumiBinaries(binDir);
    const root = opts.root ?? os.tmpdir();
    fs.mkdirSync(root, { recursive: true });
    this.dir = fs.mkdtempSync(path.join(root, "pulumi-"));
    this.backend = path.join(this.dir, "backend");
    this.home = path.join(this.dir, "home");
    this.project = path.join(this.dir, "project");
    for (const d of [this.backend, this.home, this.project]) fs.mkdirSync(d);
    // A real directory per plugin (the engine skips symlinked entries), its files linked in.
    for (const plugin of opts.plugins ?? []) {
      const dest = path.join(this.home, "plugins", path.basename(plugin));
      fs.mkdirSync(dest, { recursive: true });
      for (const f of fs.readdirSync(plugin)) fs.symlinkSync(path.join(plugin, f), path.join(dest, f));
    }
    // The project file: the program's own, or `projectFile` (e.g. the repository root's), its `main`
    // (when it has one) resolved against the file's directory and re-based onto this directory.
    const projectFile = opts.projectFile ?? path.join(opts.programDir ?? PROGRAM_DIR, "Pulumi.yaml");
    const project = YAML.parse(fs.readFileSync(projectFile, "utf8")) as Record<string, unknown>;
    const main =
      typeof project.main === "string"
        ? path.resolve(path.dirname(projectFile), project.main)
        : (opts.programDir ?? path.dirname(projectFile));
    /** The program directory (or file) the engine runs, as the project file names it. */
    if (opts.copyProgram) {
      for (const e of fs.readdirSync(main, { withFileTypes: true }))
        if (e.isFile() && e.name !== "Pulumi.yaml")
          fs.copyFileSync(path.join(main, e.name), path.join(this.project, e.name));
      delete project.main;
    }
    this.main = opts.copyProgram ? this.project : main;
    fs.writeFileSync(
      path.join(this.project, "Pulumi.yaml"),
      YAML.stringify(opts.copyProgram ? project : { ...project, main: path.relative(this.project, main) }),
    );
    this.env = {
      PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ""}`,
      HOME: process.env.HOME,
      PULUMI_HOME: this.home,
      PULUMI_CONFIG_PASSPHRASE: passphrase,
      PULUMI_SKIP_UPDATE_CHECK: "true",
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
      NO_COLOR: "1",
      ...opts.env,
    };
  }

  /** Runs `pulumi <args>` in the project directory; `input` goes to its stdin. */
  run(args: readonly string[], opts: { input?: string; timeoutMs?: number } = {}): RunResult {
    const r = spawnSync("pulumi", ["--non-interactive", "--color", "never", ...args], {
      cwd: this.project,
      env: this.env,
      encoding: "utf8",
      input: opts.input ?? "",
      timeout: opts.timeoutMs ?? 180_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    if (r.error) {
      // A timeout kills pulumi: what it had printed by then says where it waited.
      const partial = `${r.stdout ?? ""}${r.stderr ?? ""}`.slice(-8000);
      throw new Error(`pulumi ${args.join(" ")}: ${r.error.message}; its output so far:\n${partial}`);
    }
    const result = { code: r.status, stdout: r.stdout, stderr: r.stderr, output: r.stdout + r.stderr };
    this.transcript.push(`$ pulumi ${args.join(" ")}\n${result.output}`);
    return result;
  }

  /**
   * Like run(), without blocking the event loop (a cluster's guest and kubelet proxy live in the same
   * process), each chunk of output also given to `echo` as it comes (e.g. a demo printing the preview).
   */
  runAsync(
    args: readonly string[],
    opts: { input?: string; timeoutMs?: number; echo?: (chunk: string) => void } = {},
  ): Promise<RunResult> {
    return new Promise((resolve, reject) => {
      const child = spawn("pulumi", ["--non-interactive", "--color", "never", ...args], {
        cwd: this.project,
        env: this.env,
        stdio: ["pipe", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      let output = "";
      const timeoutMs = opts.timeoutMs ?? 180_000;
      const timer = setTimeout(() => child.kill("SIGTERM"), timeoutMs);
      const take = (to: "out" | "err") => (b: Buffer) => {
        const text = b.toString("utf8");
        if (to === "out") stdout += text;
        else stderr += text;
        output += text;
        opts.echo?.(text);
      };
      child.stdout.on("data", take("out"));
      child.stderr.on("data", take("err"));
      child.on("error", (e) => {
        clearTimeout(timer);
        reject(new Error(`pulumi ${args.join(" ")}: ${e.message}`));
      });
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        this.transcript.push(`$ pulumi ${args.join(" ")}\n${output}`);
        if (signal && code === null)
          output += `\n(pulumi ${args.join(" ")}: killed by ${signal} after ${timeoutMs} ms)`;
        resolve({ code, stdout, stderr, output });
      });
      child.stdin.end(opts.input ?? "");
    });
  }

  /** The environment every command runs with (PULUMI_HOME, the passphrase, PATH, ...): to run pulumi by hand. */
  environment(): Readonly<Record<string, string>> {
    return Object.fromEntries(
      Object.entries(this.env).filter((e): e is [string, string] => typeof e[1] === "string"),
    );
  }

  /** Runs `pulumi <args>` and returns its result; throws with its whole output unless it exits 0. */
  ok(args: readonly string[], opts: { input?: string; timeoutMs?: number } = {}): RunResult {
    const r = this.run(args, opts);
    if (r.code !== 0)
      throw new Error(`pulumi ${args.join(" ")} exited ${r.code}:\n${r.stdout}\n--- stderr ---\n${r.stderr}`);
    return r;
  }

  /** `pulumi login file://<backend>` and `pulumi stack init <stack>` (passphrase secrets). */
  init(): void {
    this.ok(["login", `file://${this.backend}`]);
    this.ok(["stack", "init", this.stack, "--secrets-provider", "passphrase"]);
  }

  /** The stack's checkpoint as `pulumi stack export` prints it (secrets stay encrypted). */
  exportState(): { text: string; deployment: Deployment } {
    const text = this.ok(["stack", "export"]).stdout;
    return { text, deployment: (JSON.parse(text) as { deployment: Deployment }).deployment };
  }

  /** Every file under `dir`, with its contents. */
  static filesUnder(dir: string): Array<{ file: string; text: string }> {
    return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).flatMap((e) => {
      if (!e.isFile()) return [];
      const file = path.join(e.parentPath, e.name);
      return [{ file, text: fs.readFileSync(file, "latin1") }];
    });
  }

  cleanup(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface StateResource {
  readonly urn: string;
  readonly type: string;
  readonly id?: string;
  readonly inputs?: Record<string, unknown>;
  readonly outputs?: Record<string, unknown>;
}

export interface Deployment {
  readonly resources?: StateResource[];
}
