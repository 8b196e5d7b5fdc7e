/**
 * The Pulumi engine's half of a dynamic provider, for tests on machines without the Pulumi CLI
 * (/work/shared/notes/machine-facts.md: its binaries cannot be installed here).
 *
 * It runs the real dynamic-provider host of @pulumi/pulumi, as the CLI's `pulumi-resource-pulumi-nodejs`
 * plugin does: `node $(node -e "console.log(require.resolve('@pulumi/pulumi/cmd/dynamic-provider'))")`
 * in the program's directory, and talks to it over gRPC the way the engine does
 * (pkg/resource/plugin/provider_plugin.go):
 *
 * - Configure first. The host answers that it does not accept secrets, so properties go out as the
 *   engine marshals them for such a provider: every secret as its plain value.
 * - The serialized provider travels in the `__provider` property, as the SDK's dynamic.Resource puts
 *   it there (and the engine stores it in the state); the host `require`s that text and calls it.
 * - Responses are read keeping secrets (a value the provider wraps in Pulumi's secret signature stays
 *   secret) and then `annotateSecrets`: an output whose same-named input held a secret becomes secret.
 * - check gets the old inputs and the new ones; diff and update the old outputs, the new inputs and
 *   the old inputs; read the outputs and the inputs; delete the outputs and the old inputs.
 * - A failed create or update may carry ErrorResourceInitFailed in its gRPC status details (a
 *   partial failure): its id, properties and reasons are read from there as the engine reads them.
 *
 * Secrets are written as on the wire: `{ "4dabf18193072939515e22adb298388d": SECRET_SIG, value }`.
 */
import * as grpc from "@grpc/grpc-js";
import * as pulumi from "@pulumi/pulumi";
import * as provrpc from "@pulumi/pulumi/proto/provider_grpc_pb";
import * as provproto from "@pulumi/pulumi/proto/provider_pb";
import * as statusproto from "@pulumi/pulumi/proto/status_pb";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { specialSecretSig as SECRET_SIG, specialSigKey as SECRET_KEY } from "@pulumi/pulumi/runtime/rpc";
import { ChildProcess, spawn } from "node:child_process";
import { nodeSetDisksProvider } from "../../provider/provider";

export type Props = Record<string, unknown>;

export { specialSigKey as SECRET_KEY, specialSecretSig as SECRET_SIG } from "@pulumi/pulumi/runtime/rpc";
export const RESOURCE_TYPE = "pulumi-nodejs:dynamic/pulumi-lvm:NodeSetDisks";

/**
 * The provider's code exactly as `new pulumi.dynamic.Resource(provider, ...)` stores it: the same call
 * as serializeFunctionMaybeSecret in @pulumi/pulumi/dynamic/index.js.
 */
export async function serializeProvider(): Promise<string> {
  return (await pulumi.runtime.serializeFunction(() => nodeSetDisksProvider, { allowSecrets: true })).text;
}

/** A secret value, as Pulumi writes it on the wire. */
export function secret(value: unknown): Props {
  return { [SECRET_KEY]: SECRET_SIG, value };
}

export function isSecret(value: unknown): value is { value: unknown } {
  return isObject(value) && value[SECRET_KEY] === SECRET_SIG;
}

/** What the engine sends a provider that does not accept secrets: every secret as its plain value. */
export function withoutSecrets(value: unknown): unknown {
  if (isSecret(value)) return withoutSecrets(value.value);
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (isObject(value))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutSecrets(v)]));
  return value;
}

/**
 * The engine's annotateSecrets: for every input key, recurse where both sides are (non-secret)
 * objects, otherwise make the output secret when the input contains a secret.
 */
export function annotateSecrets(outs: Props, ins: Props): Props {
  const result: Props = { ...outs };
  for (const [key, inValue] of Object.entries(ins)) {
    if (!(key in result)) continue;
    const outValue = result[key];
    if (isPlainObject(outValue) && isPlainObject(inValue)) result[key] = annotateSecrets(outValue, inValue);
    else if (!isSecret(outValue) && containsSecrets(inValue)) result[key] = secret(outValue);
  }
  return result;
}

function containsSecrets(value: unknown): boolean {
  if (isSecret(value)) return true;
  if (Array.isArray(value)) return value.some(containsSecrets);
  return isObject(value) && Object.values(value).some(containsSecrets);
}

/**
 * Where `needle` occurs in `value` outside a secret (property paths; keys are searched too): the places
 * it would be stored and shown in plain text.
 */
export function plainOccurrences(value: unknown, needle: string, at = ""): string[] {
  if (isSecret(value)) return [];
  if (typeof value === "string") return value.includes(needle) ? [at || "(root)"] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => plainOccurrences(v, needle, `${at}[${i}]`));
  if (isObject(value))
    return Object.entries(value).flatMap(([k, v]) => [
      ...(k.includes(needle) ? [`${at}.${k} (key)`] : []),
      ...plainOccurrences(v, needle, at ? `${at}.${k}` : k),
    ]);
  return [];
}

/**
 * What `pulumi refresh` shows for a resource: each property path whose value changed between the
 * outputs in the state and the outputs read now (`~ path: old => new`, `+ path: new`, `- path: old`;
 * secrets as [secret]).
 */
export function refreshDiff(before: Props, after: Props): string[] {
  const a = flatten(before);
  const b = flatten(after);
  const lines: string[] = [];
  for (const key of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const [x, y] = [a.get(key), b.get(key)];
    if (x === y) continue;
    if (x === undefined) lines.push(`+ ${key}: ${y}`);
    else if (y === undefined) lines.push(`- ${key}: ${x}`);
    else lines.push(`~ ${key}: ${x} => ${y}`);
  }
  return lines;
}

function flatten(value: unknown, at = "", into = new Map<string, string>()): Map<string, string> {
  if (isSecret(value)) into.set(at, "[secret]");
  else if (Array.isArray(value) && value.length) value.forEach((v, i) => flatten(v, `${at}[${i}]`, into));
  else if (isObject(value) && Object.keys(value).length)
    for (const [k, v] of Object.entries(value)) flatten(v, at ? `${at}.${k}` : k, into);
  else into.set(at, JSON.stringify(value));
  return into;
}

function isObject(value: unknown): value is Props {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isPlainObject(value: unknown): value is Props {
  return isObject(value) && !isSecret(value);
}

/**
 * The details of an error that says the resource exists but did not fully initialize
 * (pulumirpc.ErrorResourceInitFailed in the gRPC status details): the engine records the resource
 * with these properties (a create counts as done, an update stores them) and reports the reasons.
 */
export interface InitFailure {
  readonly id: string;
  readonly properties: Props;
  readonly reasons: string[];
}

/** An error the provider answered with (its message as the engine shows it). */
export class ProviderError extends Error {
  constructor(
    readonly method: string,
    message: string,
    /** Set when the error carries ErrorResourceInitFailed (a partial failure). */
    readonly initFailure?: InitFailure,
  ) {
    super(message);
    this.name = "ProviderError";
  }
}

export interface CheckResult {
  readonly inputs: Props;
  readonly failures: Array<{ property: string; reason: string }>;
}

export interface DiffResult {
  readonly changes: "none" | "some" | "unknown";
  readonly replaces: string[];
  readonly deleteBeforeReplace: boolean;
}

/** The dynamic-provider host process and a gRPC connection to it, configured. */
export class ProviderHost {
  /** Every response (secrets kept) and every error message, in order: all the engine got back. */
  readonly received: unknown[] = [];

  private constructor(
    private readonly child: ChildProcess,
    private readonly stderr: { text: string },
    private readonly client: provrpc.ResourceProviderClient,
    readonly urn: string,
  ) {}

  /**
   * Starts the host in `programDir` (where the engine starts it: the program's directory) and
   * configures it. The engine address argument is required by the host but never dialled. `env`
   * adds to the little environment it gets (PATH, HOME), e.g. the provider's tuning variables.
   */
  static async start(programDir: string, stack = "test", env: NodeJS.ProcessEnv = {}): Promise<ProviderHost> {
    const script = require.resolve("@pulumi/pulumi/cmd/dynamic-provider", { paths: [programDir] });
    const child = spawn(
      "setpriv",
      ["--pdeathsig", "SIGKILL", "--", process.execPath, script, "127.0.0.1:1"],
      {
        cwd: programDir,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const stderr = { text: "" };
    child.stderr!.on("data", (c: Buffer) => (stderr.text += c.toString()));
    const port = await new Promise<string>((resolve, reject) => {
      let out = "";
      const timer = setTimeout(
        () => reject(new Error(`provider host did not start in 30 s:\n${stderr.text}`)),
        30_000,
      );
      child.stdout!.on("data", (c: Buffer) => {
        out += c.toString();
        const line = out.split("\n")[0]!;
        if (out.includes("\n")) {
          clearTimeout(timer);
          resolve(line.trim());
        }
      });
      child.on("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`provider host exited (${code}):\n${stderr.text}`));
      });
    });
    const client = new provrpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const host = new ProviderHost(
      child,
      stderr,
      client,
      `urn:pulumi:${stack}::pulumi-lvm::${RESOURCE_TYPE}::disks`,
    );
    const req = new provproto.ConfigureRequest();
    req.setArgs(Struct.fromJavaScript({}));
    req.setAcceptsecrets(true);
    req.setAcceptresources(true);
    const resp = await host.call<provproto.ConfigureResponse>("configure", req);
    if (resp.getAcceptsecrets())
      throw new Error("the dynamic-provider host now accepts secrets: revisit engine.ts");
    return host;
  }

  async check(olds: Props, news: Props): Promise<CheckResult> {
    const req = new provproto.CheckRequest();
    this.address(req);
    req.setOlds(marshal(olds));
    req.setNews(marshal(news));
    const resp = await this.call<provproto.CheckResponse>("check", req);
    const inputs = annotateSecrets(this.receive(resp.getInputs()), news);
    const failures = resp
      .getFailuresList()
      .map((f) => ({ property: f.getProperty(), reason: f.getReason() }));
    return { inputs, failures };
  }

  async diff(id: string, oldOutputs: Props, news: Props, oldInputs: Props): Promise<DiffResult> {
    const req = new provproto.DiffRequest();
    this.address(req);
    req.setId(id);
    req.setOlds(marshal(oldOutputs));
    req.setNews(marshal(news));
    req.setOldInputs(marshal(oldInputs));
    const resp = await this.call<provproto.DiffResponse>("diff", req);
    const changes = { 1: "none", 2: "some" }[resp.getChanges() as number] ?? "unknown";
    const result: DiffResult = {
      changes: changes as DiffResult["changes"],
      replaces: resp.getReplacesList(),
      deleteBeforeReplace: resp.getDeletebeforereplace(),
    };
    this.received.push(result);
    return result;
  }

  async create(inputs: Props): Promise<{ id: string; outputs: Props }> {
    const req = new provproto.CreateRequest();
    this.address(req);
    req.setProperties(marshal(inputs));
    const resp = await this.call<provproto.CreateResponse>("create", req);
    return { id: resp.getId(), outputs: annotateSecrets(this.receive(resp.getProperties()), inputs) };
  }

  async read(id: string, outputs: Props, inputs: Props): Promise<{ id: string; outputs: Props }> {
    const req = new provproto.ReadRequest();
    this.address(req);
    req.setId(id);
    req.setProperties(marshal(outputs));
    req.setInputs(marshal(inputs));
    const resp = await this.call<provproto.ReadResponse>("read", req);
    return { id: resp.getId(), outputs: annotateSecrets(this.receive(resp.getProperties()), outputs) };
  }

  async update(id: string, oldOutputs: Props, news: Props, oldInputs: Props): Promise<{ outputs: Props }> {
    const req = new provproto.UpdateRequest();
    this.address(req);
    req.setId(id);
    req.setOlds(marshal(oldOutputs));
    req.setNews(marshal(news));
    req.setOldInputs(marshal(oldInputs));
    const resp = await this.call<provproto.UpdateResponse>("update", req);
    return { outputs: annotateSecrets(this.receive(resp.getProperties()), news) };
  }

  async delete(id: string, outputs: Props, oldInputs: Props): Promise<void> {
    const req = new provproto.DeleteRequest();
    this.address(req);
    req.setId(id);
    req.setProperties(marshal(outputs));
    req.setOldInputs(marshal(oldInputs));
    await this.call("delete", req);
  }

  /** The host's stderr so far (it prints the stack of every failed check, diff, read and delete). */
  get log(): string {
    return this.stderr.text;
  }

  async stop(): Promise<void> {
    this.client.close();
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.on("exit", resolve));
    this.child.kill("SIGTERM");
    await exited;
  }

  private address(req: {
    setUrn(v: string): unknown;
    setName(v: string): unknown;
    setType(v: string): unknown;
  }) {
    req.setUrn(this.urn);
    req.setName("disks");
    req.setType(RESOURCE_TYPE);
  }

  private receive(struct: Struct | undefined): Props {
    const value = (struct?.toJavaScript() ?? {}) as Props;
    this.received.push(value);
    return value;
  }

  private call<T>(method: string, req: unknown): Promise<T> {
    type Unary = (req: unknown, done: (err: grpc.ServiceError | null, resp: T) => void) => void;
    const fn = (this.client as unknown as Record<string, Unary>)[method]!.bind(this.client);
    return new Promise<T>((resolve, reject) =>
      fn(req, (err, resp) => {
        if (!err) return resolve(resp);
        this.received.push(err.details);
        const initFailure = initFailureOf(err);
        if (initFailure) this.received.push(initFailure);
        reject(new ProviderError(method, err.details, initFailure));
      }),
    );
  }
}

/**
 * What the engine reads from a failed call's `grpc-status-details-bin` trailer (a google.rpc.Status):
 * an ErrorResourceInitFailed detail, its properties read keeping secrets.
 */
function initFailureOf(err: grpc.ServiceError): InitFailure | undefined {
  const [bin] = err.metadata?.get("grpc-status-details-bin") ?? [];
  if (!bin) return undefined;
  const status = statusproto.Status.deserializeBinary(new Uint8Array(bin as Buffer));
  const detail = status
    .getDetailsList()
    .find((any) => any.getTypeName() === "pulumirpc.ErrorResourceInitFailed");
  if (!detail) return undefined;
  const failed = provproto.ErrorResourceInitFailed.deserializeBinary(detail.getValue_asU8());
  return {
    id: failed.getId(),
    properties: (failed.getProperties()?.toJavaScript() ?? {}) as Props,
    reasons: failed.getReasonsList(),
  };
}

/** The engine's MarshalProperties for a provider that does not accept secrets. */
function marshal(props: Props): Struct {
  return Struct.fromJavaScript(withoutSecrets(props) as Parameters<typeof Struct.fromJavaScript>[0]);
}
