import {
  requireHostTier,
  Scratch,
  startAgent,
  writeTokenFile,
  type AgentOptions,
  type AgentProcess,
} from "../../agent/harness";

export interface Testbed {
  /** This test file's scratch: its loop devices and files (made in beforeAll, after the host-tier check). */
  readonly scratch: Scratch;
  /**
   * Starts an agent for `node` on `devices` with the scratch's agent files, authenticating callers
   * by a token file that holds one token, for the user "operator" on that node; the agent is
   * stopped in afterAll.
   */
  start(o: {
    readonly node: string;
    readonly devices: readonly string[];
    readonly extraArgs?: readonly string[];
  }): Promise<{ agent: AgentProcess; token: string }>;
}

export interface TestbedOptions {
  /** How afterAll ends the agents. @default "stop" (graceful) */
  readonly end?: "stop" | "kill9";
  /** Runs in afterAll after the agents ended and before the scratch is cleaned up. */
  readonly beforeCleanup?: () => void | Promise<void>;
}

/**
 * The hooks both testbeds register: beforeAll (host tier, scratch, then `prepare`), afterAll (the
 * agents in `agents` ended, `beforeCleanup`, scratch cleaned up). `ready` is the scratch once made.
 */
function scratchHooks(
  name: string,
  testbed: string,
  options: TestbedOptions,
  prepare: (scratch: Scratch) => void = () => undefined,
): { ready: () => Scratch; agents: AgentProcess[] } {
  let scratch: Scratch | undefined;
  const agents: AgentProcess[] = [];
  beforeAll(() => {
    requireHostTier();
    scratch = new Scratch(name);
    prepare(scratch);
  });
  afterAll(async () => {
    for (const agent of agents) await (options.end === "kill9" ? agent.kill9() : agent.stop());
    await options.beforeCleanup?.();
    scratch?.cleanup();
  });
  const ready = (): Scratch => {
    if (!scratch) throw new Error(`${testbed}("${name}"): the scratch exists from beforeAll on`);
    return scratch;
  };
  return { ready, agents };
}

/**
 * The preamble the agent's single-agent integration tests share (test/agent/*.test.ts): call at the
 * top of the file; it registers the beforeAll (host tier, scratch) and the afterAll (agents ended,
 * `beforeCleanup`, scratch cleaned up: loop devices, volume groups, files).
 */
export function agentTestbed(name: string, options: TestbedOptions = {}): Testbed {
  const { ready, agents } = scratchHooks(name, "agentTestbed", options);
  return {
    get scratch() {
      return ready();
    },
    async start({ node, devices, extraArgs }) {
      const s = ready();
      const tokenFile = s.path("tokens");
      const token = writeTokenFile(tokenFile, { op: { user: "operator", node } }).op!;
      const agent = await startAgent({
        node,
        devices,
        ...s.agentFiles(),
        auth: { tokenFile },
        ...(extraArgs ? { extraArgs } : {}),
      });
      agents.push(agent);
      return { agent, token };
    },
  };
}

/**
 * A testbed for files that run several agents (nodes) or restart one, e.g. after kill -9: one
 * scratch, one token for the user "operator" valid on every node, each agent ended in afterAll.
 */
export interface AgentFleet {
  /** This test file's scratch (made in beforeAll, after the host-tier check). */
  readonly scratch: Scratch;
  /** The operator's token, valid on every node (`*`). */
  readonly token: string;
  /** An agent's options for `node` on `devices`: the scratch's files of that node, the token file; then `extra`. */
  options(node: string, devices: readonly string[], extra?: Partial<AgentOptions>): AgentOptions;
  /** Starts an agent; it is ended in afterAll (TestbedOptions.end). */
  start(o: AgentOptions): Promise<AgentProcess>;
}

export function agentFleet(name: string, options: TestbedOptions = {}): AgentFleet {
  let token: string | undefined;
  const { ready, agents } = scratchHooks(name, "agentFleet", options, (scratch) => {
    token = writeTokenFile(scratch.path("tokens"), { op: { user: "operator", node: "*" } }).op!;
  });
  return {
    get scratch() {
      return ready();
    },
    get token() {
      ready();
      return token!;
    },
    options: (node, devices, extra = {}) => ({
      node,
      devices,
      ...ready().agentFiles(node),
      auth: { tokenFile: ready().path("tokens") },
      ...extra,
    }),
    async start(o) {
      const agent = await startAgent(o);
      agents.push(agent);
      return agent;
    },
  };
}
