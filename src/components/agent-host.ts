import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { dnsSubdomainProblem, type ValidationProblem } from "../api";
import {
  BUNDLE_FILE,
  credentialsIdOf,
  installScript,
  prepareScript,
  removeScript,
  type AgentHostScriptInput,
} from "./agent-host-script";
import type { AgentEndpoint } from "./node-set";
import { secretArgProblems, secretArgsGuard, type SecretArgPath } from "./secret-args";
import { argsProblems, nonEmptyStringInput, throwIfInvalid } from "./validate-args";

/** Arguments of an AgentHost: one bare host reached over SSH. */
export interface AgentHostArgs {
  /** The node name the agent serves (NodeSet's `agents` key). @example "edge-1" */
  readonly nodeName: string;
  /** The host's address (DNS name or IP), for SSH and, by default, the agent's URL. @example "10.0.0.11" */
  readonly host: string;
  /** SSH port. @default 22 */
  readonly port?: number;
  /** SSH user; not root needs passwordless sudo (`sudo`). @example "debian" */
  readonly user: string;
  /** The SSH private key (PEM/OpenSSH text), kept as a secret. @example config.requireSecret("sshKey") */
  readonly privateKey: pulumi.Input<string>;
  /**
   * The host's SSH public key, as in its /etc/ssh/ssh_host_ed25519_key.pub (`ssh-ed25519 AAAA...`):
   * every SSH connection to the host (the copy, the install, HostInventory's read) refuses a host
   * that does not hold its private key. Required unless `insecureIgnoreHostKey` is true.
   * @example "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIH2L... root@edge-1"
   */
  readonly hostKey?: pulumi.Input<string>;
  /**
   * Connect without checking the host's key: whoever answers at `host` (a machine in the middle, a
   * reused address) gets the SSH key's login, the agent bundle and the root install, and its answer
   * is trusted as the agent's. Only for throwaway hosts. @default false
   */
  readonly insecureIgnoreHostKey?: boolean;
  /**
   * Any text; changing it makes the agent a new token and a new serving certificate on the host (the
   * agent restarts with them; the old token stops working). The certificate is valid one year: an
   * install within 30 days of its end makes a new one too. @default ""
   * @example "2027-01"
   */
  readonly credentialsRevision?: string;
  /** Run the installation with `sudo -n`. @default true unless user is "root" */
  readonly sudo?: boolean;
  /**
   * The agent bundle: a tarball of the pulumi-lvm package with its production dependencies
   * (`scripts/agent-bundle.sh` makes it). Its sha256 is the upgrade trigger.
   * @example "../../pulumi-lvm-agent-0.1.0.tgz"
   */
  readonly bundle: string;
  /** The port the agent listens on (TLS). @default 9443 */
  readonly agentPort?: number;
  /**
   * The agent's URL as Pulumi reaches it (a forwarded port, a load balancer's name); the serving
   * certificate is also made for its host name. @default https://<host>:<agentPort>
   */
  readonly agentUrl?: string;
  /** The agent's --devices: the only devices lvm may see on the host. @default all */
  readonly devices?: string[];
}

/**
 * The pulumi-lvm node agent on one bare host (no Kubernetes): copied there over SSH, installed as a
 * systemd unit with its own token and self-signed serving certificate, and read back as `endpoint`
 * for NodeSet's `agents`. Never runs lvm: the disks change only through the plans NodeSet previews.
 * Delete stops and removes the agent; volume groups and the agent's journal stay.
 */
export class AgentHost extends pulumi.ComponentResource {
  /** The node name the agent serves. */
  public readonly nodeName!: pulumi.Output<string>;
  /** How NodeSet reaches the agent: its URL, token (secret) and pinned CA certificate. */
  public readonly endpoint!: AgentEndpoint;

  constructor(name: string, args: AgentHostArgs, opts?: pulumi.ComponentResourceOptions) {
    const plan = planAgentHost(name, args);
    super(AGENT_HOST_TYPE, name, {}, opts);
    // From another language, a private key given as a non-secret Output is refused here.
    const secrets = secretArgsGuard("AgentHost", name, args, AGENT_HOST_SECRET_ARGS);
    if (args.insecureIgnoreHostKey)
      void pulumi.log.warn(
        `AgentHost "${name}": insecureIgnoreHostKey is set, so ${args.host}'s SSH host key is not checked: whoever answers there gets the install as root`,
        this,
      );
    const connection = {
      host: args.host,
      port: plan.sshPort,
      user: args.user,
      privateKey: pulumi.secret(secrets.hold(args.privateKey)),
      ...(args.hostKey !== undefined ? { hostKey: args.hostKey } : {}),
    };
    // A directory only the SSH user can write, new for each bundle, that the bundle is copied into.
    const prepare = new command.remote.Command(
      `${name}-prepare`,
      { connection, create: prepareScript(), triggers: [plan.script.bundleHash], logging: "stderr" },
      { parent: this },
    );
    const incoming = prepare.stdout.apply((out) => parseIncomingDir(name, out));
    const bundle = new command.remote.CopyToRemote(
      `${name}-bundle`,
      {
        connection,
        source: new pulumi.asset.FileAsset(args.bundle),
        remotePath: incoming.apply((dir) => `${dir}/${BUNDLE_FILE}`),
        triggers: [plan.script.bundleHash],
      },
      { parent: this, dependsOn: [prepare] },
    );
    const agent = new command.remote.Command(
      `${name}-agent`,
      {
        connection,
        create: incoming.apply((dir) => installScript(plan.script, plan.url, dir)),
        delete: incoming.apply((dir) => removeScript(plan.script, dir)),
        // Not the credentials: a new revision changes `create`, so the command is updated (create
        // runs again and rotates) and no delete runs; a stack whose state holds an older delete
        // script is never torn down by a rotation.
        triggers: [plan.script.bundleHash],
        logging: "stderr",
      },
      { parent: this, dependsOn: [bundle], additionalSecretOutputs: ["stdout"] },
    );
    const read = agent.stdout.apply((out) => parseAgentOutput(name, out, plan.url));
    agentHostFacts.set(this, { name, node: args.nodeName, connection, script: plan.script, agent });
    const endpoint = {
      // The planned URL, once the host said it serves there (parseAgentOutput refuses another).
      url: pulumi.unsecret(read.apply(() => plan.url)),
      token: pulumi.secret(read.apply((r) => r.token)),
      caCertificate: pulumi.unsecret(read.apply((r) => r.caCertificate)),
    };
    // A refused secret arg fails the outputs; the registered ones wait for the check (secret-args.ts).
    this.nodeName = secrets.guard(args.nodeName);
    this.endpoint = {
      url: secrets.guard(endpoint.url),
      token: secrets.guard(endpoint.token),
      caCertificate: secrets.guard(endpoint.caCertificate),
    };
    this.registerOutputs({
      nodeName: secrets.hold(args.nodeName),
      endpoint: {
        url: secrets.hold(endpoint.url),
        token: secrets.hold(endpoint.token),
        caCertificate: secrets.hold(endpoint.caCertificate),
      },
    });
  }
}

export const AGENT_HOST_TYPE = "pulumi-lvm:index:AgentHost";

/** The args that must arrive as secrets through the component provider (secret-args.ts). */
const AGENT_HOST_SECRET_ARGS: readonly SecretArgPath[] = [["privateKey"]];

/** NodeSet's `agents` from AgentHosts: `agents: agentsOf(hosts)`. Two hosts with one node name are an error. */
export function agentsOf(hosts: readonly AgentHost[]): Record<string, AgentEndpoint> {
  const agents: Record<string, AgentEndpoint> = {};
  for (const h of hosts) {
    const node = agentHostFacts.get(h)?.node;
    if (node === undefined) throw new Error("agentsOf: not an AgentHost");
    if (agents[node]) throw new Error(`agentsOf: two AgentHosts serve the node "${node}"`);
    agents[node] = h.endpoint;
  }
  return agents;
}

/** What an AgentHost's companions (HostInventory) need of it: its node, SSH connection, paths, install command. */
export interface AgentHostFacts {
  readonly name: string;
  readonly node: string;
  readonly connection: command.types.input.remote.ConnectionArgs;
  readonly script: AgentHostScriptInput;
  /** The install command: whatever runs the installed release comes after it. */
  readonly agent: command.remote.Command;
}

const agentHostFacts = new WeakMap<AgentHost, AgentHostFacts>();

/** The facts of an AgentHost made in this program, or undefined for anything else. */
export function agentHostFactsOf(host: unknown): AgentHostFacts | undefined {
  return host instanceof AgentHost ? agentHostFacts.get(host) : undefined;
}

/** The lowest Node.js major the agent runs on (package.json engines). */
const NODE_MAJOR = 20;

interface AgentHostPlan {
  readonly sshPort: number;
  readonly url: string;
  readonly script: AgentHostScriptInput;
}

/** Validates the args and computes everything the children need; changes nothing. */
export function planAgentHost(name: string, args: AgentHostArgs): AgentHostPlan {
  const problems: ValidationProblem[] = [
    ...argsProblems(argsSchema, args),
    ...secretArgProblems(args, AGENT_HOST_SECRET_ARGS),
  ];
  let bundleHash = "";
  if (problems.length === 0) {
    try {
      bundleHash = crypto.createHash("sha256").update(fs.readFileSync(args.bundle)).digest("hex");
    } catch (e) {
      problems.push({ path: "args.bundle", message: `cannot be read: ${(e as Error).message}` });
    }
  }
  throwIfInvalid("AgentHost", name, problems);
  const agentPort = args.agentPort ?? 9443;
  const url = args.agentUrl ?? `https://${hostForUrl(args.host)}:${agentPort}`;
  const urlHost = new URL(url).hostname.replace(/^\[|\]$/g, "");
  const script: AgentHostScriptInput = {
    node: args.nodeName,
    bundleHash,
    credentialsId: credentialsIdOf(args.credentialsRevision ?? ""),
    port: agentPort,
    certificateNames: [...new Set([args.host, urlHost])],
    sudo: args.sudo ?? args.user !== "root",
    nodeMajor: NODE_MAJOR,
    ...(args.devices?.length ? { devices: args.devices } : {}),
  };
  return { sshPort: args.port ?? 22, url, script };
}

function hostForUrl(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/**
 * The agent's answer on the install command's stdout. A host that printed anything else, or another
 * URL than the planned one, is named and refused.
 */
export function parseAgentOutput(
  name: string,
  stdout: string,
  plannedUrl: string,
): { url: string; token: string; caCertificate: string } {
  const schema = z.strictObject({
    url: z.string().min(1),
    token: z.string().min(16),
    caCertificate: z.string().includes("BEGIN CERTIFICATE"),
  });
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout.trim().split("\n").pop() ?? "");
  } catch {
    parsed = undefined;
  }
  const r = schema.safeParse(parsed);
  if (!r.success)
    throw new Error(
      `AgentHost "${name}": the install command did not print the agent's {url, token, caCertificate} (got ${stdout.length} characters of other output)`,
    );
  if (r.data.url !== plannedUrl)
    throw new Error(
      `AgentHost "${name}": the host says its agent serves at ${JSON.stringify(r.data.url.slice(0, 200))}, not at the planned ${plannedUrl}: refusing its answer (is this the host you meant?)`,
    );
  return r.data;
}

/** prepareScript's answer: the path of the directory it made. Anything else is refused, naming the host. */
export function parseIncomingDir(name: string, stdout: string): string {
  const dir = stdout.trim();
  if (!/^\/[A-Za-z0-9._/+-]*\/pulumi-lvm-agent\.[A-Za-z0-9]{10}$/.test(dir) || dir.split("/").includes(".."))
    throw new Error(
      `AgentHost "${name}": mktemp on the host did not print a directory for the bundle (got ${JSON.stringify(stdout.slice(0, 200))})`,
    );
  return dir;
}

const port = z.number().int().min(1).max(65535);
const hostName = z
  .string()
  .min(1)
  .regex(/^[A-Za-z0-9.:_-]+$/, "must be a DNS name or an IP address");
const absolutePath = z.string().regex(/^\/[A-Za-z0-9._/-]+$/, "must be an absolute path like /dev/vdb");
const argsSchema = z
  .strictObject({
    nodeName: z.string().superRefine((node, ctx) => {
      const problem = dnsSubdomainProblem(node);
      if (problem) ctx.addIssue({ code: "custom", message: `is not a node name: it ${problem}` });
    }),
    host: hostName,
    port: port.optional(),
    user: z
      .string()
      .min(1)
      .regex(/^[a-z_][a-z0-9_.-]*$/, "must be a user name"),
    privateKey: nonEmptyStringInput,
    hostKey: z
      .union([
        z.string().superRefine((key, ctx) => {
          const problem = hostKeyProblem(key);
          if (problem) ctx.addIssue({ code: "custom", message: problem });
        }),
        z.custom<pulumi.Output<string>>((v) => pulumi.Output.isInstance(v) || v instanceof Promise),
      ])
      .optional(),
    insecureIgnoreHostKey: z.boolean().optional(),
    credentialsRevision: z.string().optional(),
    sudo: z.boolean().optional(),
    bundle: z.string().min(1),
    agentPort: port.optional(),
    agentUrl: z
      .string()
      .refine((u) => URL.canParse(u) && new URL(u).protocol === "https:", "must be an https:// URL")
      .optional(),
    devices: z.array(absolutePath).optional(),
  })
  .superRefine((args, ctx) => {
    if (args.hostKey !== undefined && args.insecureIgnoreHostKey)
      ctx.addIssue({
        code: "custom",
        path: ["insecureIgnoreHostKey"],
        message: "cannot go with hostKey: give the host's key, or set insecureIgnoreHostKey alone",
      });
    if (args.hostKey === undefined && !args.insecureIgnoreHostKey)
      ctx.addIssue({
        code: "custom",
        path: ["hostKey"],
        message:
          "is required: the host's SSH public key (its /etc/ssh/ssh_host_ed25519_key.pub, read on the host or from your provisioning), so that no other machine answering at this address gets the install; insecureIgnoreHostKey: true connects without checking",
      });
  });

/** SSH public key types the Command provider can pin (golang.org/x/crypto/ssh). */
const HOST_KEY_TYPES = [
  "ssh-ed25519",
  "ecdsa-sha2-nistp256",
  "ecdsa-sha2-nistp384",
  "ecdsa-sha2-nistp521",
  "ssh-rsa",
  "sk-ssh-ed25519@openssh.com",
  "sk-ecdsa-sha2-nistp256@openssh.com",
];

/** Why `key` is not one SSH public key line (`<type> <base64> [comment]`), or undefined. */
export function hostKeyProblem(key: string): string | undefined {
  const [type, blob] = key.trim().split(/\s+/);
  const wanted =
    "must be one SSH public key line `<type> <base64> [comment]` as in /etc/ssh/ssh_host_ed25519_key.pub";
  if (key.trim().includes("\n")) return `${wanted} (got several lines)`;
  if (!type || !HOST_KEY_TYPES.includes(type))
    return `${wanted}; its type ${JSON.stringify(type ?? "")} is not one of ${HOST_KEY_TYPES.join(", ")} (a line from ssh-keyscan or known_hosts starts with the host name: leave it out)`;
  if (!blob || !/^[A-Za-z0-9+/]+={0,2}$/.test(blob)) return `${wanted} (its key is not base64)`;
  // The key's own wire format starts with its type: a key pasted under another type is refused here.
  const raw = Buffer.from(blob, "base64");
  const length = raw.length >= 4 ? raw.readUInt32BE(0) : -1;
  if (length < 0 || raw.subarray(4, 4 + length).toString("latin1") !== type)
    return `${wanted} (its base64 is not a ${type} key)`;
  return undefined;
}
