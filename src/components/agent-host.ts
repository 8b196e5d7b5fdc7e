import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { dnsSubdomainProblem, type ValidationProblem } from "../api";
import { installScript, removeScript, type AgentHostScriptInput } from "./agent-host-script";
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
    const connection = {
      host: args.host,
      port: plan.sshPort,
      user: args.user,
      privateKey: pulumi.secret(secrets.hold(args.privateKey)),
    };
    const bundle = new command.remote.CopyToRemote(
      `${name}-bundle`,
      {
        connection,
        source: new pulumi.asset.FileAsset(args.bundle),
        remotePath: plan.script.bundlePath,
        triggers: [plan.script.bundleHash],
      },
      { parent: this },
    );
    const agent = new command.remote.Command(
      `${name}-agent`,
      {
        connection,
        create: installScript(plan.script, plan.url),
        delete: removeScript(plan.script),
        triggers: [plan.script.bundleHash],
        logging: "stderr",
      },
      { parent: this, dependsOn: [bundle], additionalSecretOutputs: ["stdout"] },
    );
    const read = agent.stdout.apply((out) => parseAgentOutput(name, out));
    agentHostFacts.set(this, { name, node: args.nodeName, connection, script: plan.script, agent });
    const endpoint = {
      url: pulumi.unsecret(read.apply((r) => r.url)),
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
    this.registerOutputs(secrets.hold({ nodeName: args.nodeName, endpoint }));
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
    bundlePath: `/tmp/pulumi-lvm-agent-${bundleHash.slice(0, 16)}.tgz`,
    bundleHash,
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

/** The agent's answer on the install command's stdout. A host that printed anything else is named. */
export function parseAgentOutput(
  name: string,
  stdout: string,
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
  return r.data;
}

const port = z.number().int().min(1).max(65535);
const hostName = z
  .string()
  .min(1)
  .regex(/^[A-Za-z0-9.:_-]+$/, "must be a DNS name or an IP address");
const absolutePath = z.string().regex(/^\/[A-Za-z0-9._/-]+$/, "must be an absolute path like /dev/vdb");
const argsSchema = z.strictObject({
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
  sudo: z.boolean().optional(),
  bundle: z.string().min(1),
  agentPort: port.optional(),
  agentUrl: z
    .string()
    .refine((u) => URL.canParse(u) && new URL(u).protocol === "https:", "must be an https:// URL")
    .optional(),
  devices: z.array(absolutePath).optional(),
});
