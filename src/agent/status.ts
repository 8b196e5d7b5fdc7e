import {
  formatBytes,
  type Condition,
  type DeviceClassStatus,
  type LVMNodeSpec,
  type LVMNodeStatus,
  type VolumeGroupStatus,
} from "../api";
import { devicesFileInUse, listsPv } from "../inventory/devices-file";
import type { NodeInventory, PhysicalVolume } from "../inventory/types";
import type { NodePlan } from "../planner/types";
import type { OperationSummary } from "./journal";
import type { LastOperation } from "../agent-api/schemas";

export interface StatusInput {
  /** The spec of the last operation, if the agent ever ran one. */
  readonly spec: LVMNodeSpec | undefined;
  readonly inventory: NodeInventory;
  /** The spec planned against the inventory now (what is still to do, what is excluded and why). */
  readonly plan: NodePlan | undefined;
  /** The journal's last operation. */
  readonly last: OperationSummary | undefined;
  /** An operation is running right now. */
  readonly running: boolean;
  readonly now: Date;
}

/**
 * The LVMNode status as this node sees it: per volume group its size, free space, state, devices
 * (included, and excluded with reasons) and our thin pools; per device class its state; conditions;
 * and from the journal what happened last and, when it failed, why.
 */
export function buildStatus(input: StatusInput): { status: LVMNodeStatus; lastOperation?: LastOperation } {
  const lastOperation = input.last ? summarize(input.last, input.running) : undefined;
  const spec = input.spec;
  if (!spec) {
    return {
      status: {
        state: "Pending",
        volumeGroups: [],
        deviceClasses: [],
        conditions: [
          condition(
            "VolumeGroupsHealthy",
            "Unknown",
            "NotApplied",
            "no spec was applied on this node yet",
            input.now,
          ),
        ],
      },
      ...(lastOperation ? { lastOperation } : {}),
    };
  }
  const volumeGroups = spec.volumeGroups.map((vg) => volumeGroupStatus(vg.name, spec, input, lastOperation));
  const deviceClasses = (spec.deviceClasses ?? []).map((dc) => deviceClassStatus(dc, volumeGroups, input));
  const since = lastOperation?.finishedAt ? new Date(lastOperation.finishedAt) : input.now;
  const unhealthyVgs = volumeGroups.filter((v) => v.state !== "Healthy");
  const unhealthyDcs = deviceClasses.filter((d) => d.state !== "Healthy");
  const conditions: Condition[] = [
    unhealthyVgs.length
      ? condition(
          "VolumeGroupsHealthy",
          "False",
          reasonOf(unhealthyVgs[0]!.state),
          unhealthyVgs.map((v) => `${v.name}: ${v.state}${v.message ? ` (${v.message})` : ""}`).join("; "),
          since,
        )
      : condition(
          "VolumeGroupsHealthy",
          "True",
          "Healthy",
          `${volumeGroups.length} volume group(s) healthy`,
          since,
        ),
    unhealthyDcs.length
      ? condition(
          "DeviceClassesHealthy",
          "False",
          reasonOf(unhealthyDcs[0]!.state),
          unhealthyDcs.map((d) => `${d.name}: ${d.state}${d.message ? ` (${d.message})` : ""}`).join("; "),
          since,
        )
      : condition(
          "DeviceClassesHealthy",
          "True",
          "Healthy",
          `${deviceClasses.length} device class(es) healthy`,
          since,
        ),
  ];
  return {
    status: {
      state: nodeState(volumeGroups, deviceClasses, input.running),
      volumeGroups,
      deviceClasses,
      conditions,
    },
    ...(lastOperation ? { lastOperation } : {}),
  };
}

/* ------------------------------------------------------------------------------ helpers ---- */

function volumeGroupStatus(
  name: string,
  spec: LVMNodeSpec,
  input: StatusInput,
  last: LastOperation | undefined,
): VolumeGroupStatus {
  const vg = input.inventory.vgs.find((v) => v.name === name);
  const planned = input.plan?.volumeGroups.find((v) => v.name === name);
  const pending =
    input.plan?.actions.filter((a) => a.volumeGroup === name && a.op !== "write-lvmd-config") ?? [];
  const blocked = input.plan?.blocked.filter((b) => b.volumeGroup === name) ?? [];
  const excluded = planned?.excluded.map((e) => ({ kname: e.kname, reasons: [...e.reasons] })) ?? [];
  const missingPvs = input.inventory.pvs.filter((pv) => pv.vgName === name && pv.missing);
  const unlisted = unlistedPvs(input.inventory, name);
  const short = vg && !input.running ? shortOfClaims(name, input) : undefined;
  const failed = last?.result === "failed" || last?.result === "interrupted";
  const failure =
    failed && last?.error
      ? `last ${last.kind} ${last.result}: ${last.error.message}`
      : failed
        ? `last ${last!.kind} ${last!.result}`
        : undefined;
  let state: VolumeGroupStatus["state"];
  let message: string | undefined;
  if (input.running) [state, message] = ["Progressing", `operation ${last?.operation ?? ""} running`.trim()];
  else if (!vg) {
    if (failed) [state, message] = ["Failed", failure];
    else if (last?.kind === "teardown" && last.result === "succeeded")
      [state, message] = ["Missing", `removed by teardown ${last.operation}`];
    else if (!last) [state, message] = ["Pending", "not applied yet"];
    else [state, message] = ["Missing", `volume group ${name} does not exist on this node`];
  } else if (pending.length || blocked.length || missingPvs.length || unlisted || short) {
    state = failed ? "Failed" : "Degraded";
    message = [
      failure,
      short,
      missingPvs.length ? missingMessage(name, missingPvs, input.inventory.missingDevices ?? []) : undefined,
      unlisted,
      pending.length
        ? `${pending.length} step(s) to do: ${pending.map((a) => a.argv.join(" ") || a.op).join("; ")}`
        : undefined,
      ...blocked.map((b) => b.reason),
    ]
      .filter(Boolean)
      .join("; ");
  } else state = "Healthy";
  const pools = new Set(
    (spec.deviceClasses ?? [])
      .filter((dc) => dc.volumeGroup === name && dc.thin)
      .map((dc) => dc.thin!.poolName),
  );
  const volumes = input.inventory.lvs
    .filter((lv) => lv.vgName === name && pools.has(lv.name))
    .map((lv) => ({
      name: lv.name,
      attributes: lv.attr,
      size: formatBytes(lv.size),
      ...(lv.dataPercent !== undefined ? { dataPercent: lv.dataPercent.toFixed(2) } : {}),
      ...(lv.metadataPercent !== undefined ? { metadataPercent: lv.metadataPercent.toFixed(2) } : {}),
    }));
  const included = input.inventory.pvs
    .filter((pv) => pv.vgName === name)
    .map((pv) => ({ kname: pv.device, id: `pv:${pv.uuid}`, size: formatBytes(pv.size) }));
  return {
    name,
    state,
    ...(vg ? { size: formatBytes(vg.size), free: formatBytes(vg.free) } : {}),
    ...(message ? { message } : {}),
    devices: { included, excluded },
    volumes,
  };
}

/**
 * Why volume group `name` is smaller than the last apply approved, or undefined: it has fewer
 * physical volumes than devices the approved plan claimed for it (journal's claimedByVolumeGroup),
 * e.g. a device left out after a crash, or removed from the group by hand. The claimed devices that
 * are no member now (by path or kernel name) are named; the count decides (kernel names can change).
 */
function shortOfClaims(name: string, input: StatusInput): string | undefined {
  const start = input.last?.start;
  if (!start || start.kind !== "apply") return undefined;
  const claimed = start.claimedByVolumeGroup?.[name];
  if (!claimed) return undefined;
  const members = input.inventory.pvs.filter((pv) => pv.vgName === name);
  if (members.length >= claimed.length) return undefined;
  const memberNames = new Set(members.map((pv) => pv.device));
  for (const d of input.inventory.devices)
    if (memberNames.has(d.kname) || memberNames.has(d.path))
      [d.kname, d.path].forEach((n) => memberNames.add(n));
  const absent = claimed.filter((d) => !memberNames.has(d));
  return `${members.length} physical volume(s), but the approved plan ${start.approvedHash} claimed ${claimed.length}${absent.length ? ` (not a member now: ${absent.join(", ")})` : ""}`;
}

/**
 * "physical volume /dev/sdb of <vg> is not in lvm's devices file system.devices (...)": while the host
 * uses the file, its lvm, boot-time activation and lvmd do not see such a PV, and the group is partial there.
 */
function unlistedPvs(inventory: NodeInventory, vg: string): string | undefined {
  const file = inventory.devicesFile;
  if (!devicesFileInUse(file)) return undefined;
  const pvs = inventory.pvs.filter((pv) => pv.vgName === vg && !pv.missing && !listsPv(file, pv.uuid));
  if (!pvs.length) return undefined;
  const one = pvs.length === 1;
  return `${one ? "physical volume" : "physical volumes"} ${pvs.map((pv) => pv.device).join(", ")} of ${vg} ${one ? "is" : "are"} not in lvm's devices file ${file.name}: the host's lvm, its boot-time activation and lvmd do not see ${one ? "it" : "them"}`;
}

/** "physical volume pv:<uuid> of <vg> is missing (lvm cannot find its device; not found on this node: /dev/loop1)". */
function missingMessage(
  vg: string,
  missing: readonly PhysicalVolume[],
  missingDevices: readonly string[],
): string {
  const pvs = missing.map((pv) => `pv:${pv.uuid}`).join(", ");
  const gone = missingDevices.length ? `; not found on this node: ${missingDevices.join(", ")}` : "";
  return `${missing.length === 1 ? "physical volume" : "physical volumes"} ${pvs} of ${vg} ${missing.length === 1 ? "is" : "are"} missing (lvm cannot find ${missing.length === 1 ? "its device" : "their devices"}${gone})`;
}

function deviceClassStatus(
  dc: NonNullable<LVMNodeSpec["deviceClasses"]>[number],
  volumeGroups: readonly VolumeGroupStatus[],
  input: StatusInput,
): DeviceClassStatus {
  const vg = volumeGroups.find((v) => v.name === dc.volumeGroup);
  const base = { name: dc.name, volumeGroup: dc.volumeGroup };
  if (!vg || vg.state !== "Healthy") {
    const state: DeviceClassStatus["state"] =
      vg?.state === "Pending" || vg?.state === "Progressing"
        ? vg.state
        : vg?.state === "Degraded"
          ? "Degraded"
          : "Failed";
    return { ...base, state, message: `volume group ${dc.volumeGroup} is ${vg?.state ?? "unknown"}` };
  }
  if (
    dc.thin &&
    !input.inventory.lvs.some((lv) => lv.vgName === dc.volumeGroup && lv.name === dc.thin!.poolName)
  )
    return {
      ...base,
      state: "Degraded",
      message: `thin pool ${dc.volumeGroup}/${dc.thin.poolName} does not exist`,
    };
  const lvmd = input.plan?.actions.find((a) => a.op === "write-lvmd-config");
  if (lvmd)
    return {
      ...base,
      state: "Degraded",
      message: `${lvmd.file?.path ?? "lvmd.yaml"} does not hold what the spec wants (step to do: write-lvmd-config)`,
    };
  return { ...base, state: "Healthy" };
}

function nodeState(
  volumeGroups: readonly VolumeGroupStatus[],
  deviceClasses: readonly DeviceClassStatus[],
  running: boolean,
): NonNullable<LVMNodeStatus["state"]> {
  if (running) return "Progressing";
  if (volumeGroups.every((v) => v.state === "Healthy"))
    return deviceClasses.every((d) => d.state === "Healthy") ? "Ready" : "Degraded";
  if (volumeGroups.some((v) => v.state === "Failed")) return "Failed";
  if (volumeGroups.every((v) => v.state === "Pending")) return "Pending";
  return "Degraded";
}

function reasonOf(state: string): string {
  return (
    {
      Failed: "OperationFailed",
      Pending: "NotApplied",
      Progressing: "Progressing",
      Missing: "Missing",
      Degraded: "NotConverged",
    }[state] ?? state
  );
}

function condition(
  type: string,
  status: Condition["status"],
  reason: string,
  message: string,
  at: Date,
): Condition {
  return { type, status, reason, message, lastTransitionTime: at.toISOString() };
}

/** The journal's view of one operation, as the status reports it. */
export function summarize(summary: OperationSummary, running: boolean): LastOperation {
  const { start, finish } = summary;
  const finished = summary.actions.filter((a) => a.type === "action-finish");
  const failedStep = summary.actions.find((a) => a.type === "action-error");
  const result: LastOperation["result"] = finish ? finish.result : running ? "running" : "interrupted";
  const error = finish?.error ?? (failedStep?.type === "action-error" ? failedStep.error : undefined);
  return {
    operation: start.op,
    kind: start.kind,
    result,
    startedAt: start.at,
    ...(finish ? { finishedAt: finish.at } : {}),
    planHash: start.planHash,
    stepsDone: finished.filter((a) => a.type === "action-finish" && !a.skipped).length,
    stepsSkipped: finished.filter((a) => a.type === "action-finish" && a.skipped).length,
    stepCount: start.actionCount,
    ...(error || result === "interrupted"
      ? {
          error: {
            message:
              error?.message ??
              `the agent stopped during this ${start.kind}; send the same request again to resume it`,
            ...(failedStep?.type === "action-error"
              ? {
                  step: failedStep.index,
                  action: failedStep.action,
                  ...(failedStep.device ? { device: failedStep.device } : {}),
                }
              : {}),
            ...(error?.argv ? { argv: [...error.argv] } : {}),
            ...(error?.exitCode !== undefined ? { exitCode: error.exitCode } : {}),
            ...(error?.stderr !== undefined ? { stderr: error.stderr } : {}),
          },
        }
      : {}),
  };
}
