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
