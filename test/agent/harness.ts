/**
 * What the agent's integration tests share: loop devices of their own (backing files under
 * /var/tmp/agent-tests/, volume groups named agt-*), lvm run by the test itself (restricted to its
 * own devices by a filter, independent of the agent), agent processes started from src/agent/main.ts,
 * and a small HTTP(S) client. Each part has a file of its own (host-lvm.ts, agent-process.ts,
 * command-log-reader.ts, tls-files.ts); this one gathers them, so tests import from one place.
 *
 * Other engineers create loop devices and volume groups on the same machine: everything here touches
 * only the devices it created, and cleanup() removes exactly those.
 */
export {
  filterConfig,
  lvm,
  membersOf,
  pvs,
  requireHostTier,
  ROOT,
  Scratch,
  vgs,
  type PvRow,
  type VgRow,
} from "./host-lvm";
export { REPO, startAgent, writeTokenFile, type AgentOptions, type AgentProcess } from "./agent-process";
export { commandLog, commandLogLines, isWrite, WRITE_TOOLS, type CommandLogLine } from "./command-log-reader";
export { makeTls, writeKubeconfig } from "./tls-files";

export { request, type Res } from "../support/agent/http";
import { request, type Res } from "../support/agent/http";

/**
 * Plans `spec` on the agent at `url` and applies exactly that plan (its hash), as the provider does;
 * throws with the status and body unless both answer 200. Returns the plan and the apply's result.
 */
export async function planAndApply(
  url: string,
  token: string,
  spec: unknown,
): Promise<{ plan: Res["json"]; result: Res["json"] }> {
  const plan = await request(url, "POST", "/v1/plan", { token, body: { spec } });
  if (plan.status !== 200) throw new Error(`plan: HTTP ${plan.status}: ${plan.text}`);
  const applied = await request(url, "POST", "/v1/apply", {
    token,
    body: { spec, planHash: plan.json.hash },
  });
  if (applied.status !== 200) throw new Error(`apply: HTTP ${applied.status}: ${applied.text}`);
  return { plan: plan.json, result: applied.json };
}

/** A Thick LVMNode spec: one volume group on the given devices (selected by path), one device class. */
export function thickSpec(vg: string, devices: readonly string[]) {
  return {
    volumeGroups: [
      {
        name: vg,
        minDeviceSize: "64Mi",
        deviceSelector: {
          deviceSelectorTerms: [
            { matchExpressions: [{ key: "path", operator: "In", values: [...devices] }] },
          ],
        },
      },
    ],
    deviceClasses: [{ name: `${vg}-thick`, strategy: "Thick", volumeGroup: vg, default: true }],
  };
}
