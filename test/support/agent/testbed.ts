import { requireHostTier, Scratch, startAgent, writeTokenFile, type AgentProcess } from "../../agent/harness";

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
 * The preamble the agent's single-agent integration tests share (test/agent/*.test.ts): call at the
 * top of the file; it registers the beforeAll (host tier, scratch) and the afterAll (agents ended,
 * `beforeCleanup`, scratch cleaned up: loop devices, volume groups, files).
 */
export function agentTestbed(name: string, options: TestbedOptions = {}): Testbed {
  let scratch: Scratch | undefined;
  const agents: AgentProcess[] = [];
  beforeAll(() => {
    requireHostTier();
    scratch = new Scratch(name);
  });
  afterAll(async () => {
    for (const agent of agents) await (options.end === "kill9" ? agent.kill9() : agent.stop());
    await options.beforeCleanup?.();
    scratch?.cleanup();
  });
  const ready = (): Scratch => {
    if (!scratch) throw new Error(`agentTestbed("${name}"): the scratch exists from beforeAll on`);
    return scratch;
  };
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
