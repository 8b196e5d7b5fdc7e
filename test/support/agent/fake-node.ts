import type { LVMNodeSpec } from "../../../src/api/";
import type { BlockDevice, NodeInventory } from "../../../src/inventory/types";
import { OWNER_TAG } from "../../../src/inventory/types";
import type { NodePlan, PlanAction } from "../../../src/planner/types";
import type { Planner } from "../../../src/agent/agent-service";
import { sha256Canonical } from "../../../src/planner/hash";
import { LvmCommandError, type CommandLogEntry, type Runner } from "../../../src/agent/lvm-runner";

/**
 * An in-memory node for unit tests of the agent (no lvm, no devices): block devices and LVM state
 * that a fake runner changes the way lvm would, a discovery that reads them, and a small planner
 * over them. Unit tests use it where the real parts are tested by the integration tests in test/agent.
 */
export class FakeNode {
  readonly devices = new Map<string, { size: number; signatures: string[]; serial?: string }>();
  readonly pvs = new Map<string, { vg: string; uuid: string }>();
  readonly vgs = new Map<string, { tags: string[] }>();
  readonly lvs = new Map<string, { attr: string }>();
  /** Every command the fake runner ran. */
  readonly commands: string[][] = [];
  /** Runner log entries, as the real runner would give. */
  readonly log: CommandLogEntry[] = [];
  /** Make the command whose argv joined with spaces equals this fail with exit 5. */
  failOn: string | undefined;
  /** Awaited before each command runs (a test holds a node's apply with it). */
  beforeRun: ((argv: readonly string[]) => Promise<void>) | undefined;
  private uuid = 0;
  /** Volume group names on devices this node's agent does not see (another tenant's). */
  otherVolumeGroups: string[] = [];

  constructor(devices: readonly string[] = []) {
    for (const d of devices) this.devices.set(d, { size: 1 << 30, signatures: [] });
  }

  readonly run: Runner = async (argv) => {
    this.commands.push([...argv]);
    this.log.push({
      tool: argv[0]!,
      argv: [...argv],
      requested: [...argv],
      startedAt: new Date(0).toISOString(),
      durationMs: 0,
      exitCode: 0,
    });
    await this.beforeRun?.(argv);
    if (this.failOn === argv.join(" ")) throw new LvmCommandError(argv, 5, "  fake failure\n");
    const [tool, ...rest] = argv;
    const devs = rest.filter((w) => w.startsWith("/dev/"));
    const words = rest.filter((w) => !w.startsWith("-") && !w.startsWith("/dev/") && w !== OWNER_TAG);
    switch (tool) {
      case "vgs": {
        // ALL_VG_NAMES_ARGV: every group name on the machine, ours and those on other devices
        const names = [...this.vgs.keys(), ...this.otherVolumeGroups];
        return {
          argv,
          stdout: JSON.stringify({ report: [{ vg: names.map((vg_name) => ({ vg_name })) }] }),
          stderr: "",
          durationMs: 0,
        };
      }
      case "wipefs":
        for (const d of devs) this.devices.get(d)!.signatures = [];
        break;
      case "pvcreate":
        for (const d of devs) this.pvs.set(d, { vg: "", uuid: `uuid-${++this.uuid}` });
        break;
      case "vgcreate":
        this.vgs.set(words[0]!, { tags: [OWNER_TAG] });
        for (const d of devs) this.pvs.get(d)!.vg = words[0]!;
        break;
      case "vgextend":
        for (const d of devs) this.pvs.get(d)!.vg = words[0]!;
        break;
      case "vgreduce":
        for (const d of devs) this.pvs.get(d)!.vg = "";
        break;
      case "pvremove":
        for (const d of devs) this.pvs.delete(d);
        break;
      case "vgremove":
        this.vgs.delete(words[0]!);
        for (const pv of this.pvs.values()) if (pv.vg === words[0]) pv.vg = "";
        break;
      case "pvs": {
        const pv = this.pvs.get(devs[0]!);
        if (!pv) throw new LvmCommandError(argv, 5, `  Failed to find physical volume "${devs[0]}".\n`);
        return {
          argv,
          stdout: JSON.stringify({ report: [{ pv: [{ pv_name: devs[0], pv_uuid: pv.uuid }] }] }),
          stderr: "",
          durationMs: 0,
        };
      }
      case "lsblk": {
        const d = this.devices.get(devs[0]!);
        return {
          argv,
          stdout: JSON.stringify({
            blockdevices: [{ kname: devs[0], wwn: null, serial: d?.serial ?? null }],
          }),
          stderr: "",
          durationMs: 0,
        };
      }
    }
    return { argv, stdout: "", stderr: "", durationMs: 0 };
  };

  readonly discover = async (): Promise<NodeInventory> => ({
    node: "node-a",
    labels: {},
    devices: [...this.devices].map(([kname, d]): BlockDevice => ({
      kname,
      path: kname,
      type: "loop",
      size: d.size,
      symlinks: [],
      readOnly: false,
      removable: false,
      mountpoints: [],
      children: [],
      suspended: false,
      signatures: d.signatures.map((type) => ({ type })),
      ...(d.serial ? { serial: d.serial } : {}),
    })),
    pvs: [...this.pvs].map(([device, pv]) => ({
      device,
      uuid: pv.uuid,
      vgName: pv.vg,
      size: 1 << 30,
      free: 1 << 30,
      tags: [],
    })),
    vgs: [...this.vgs].map(([name, vg]) => ({
      name,
      uuid: `vg-${name}`,
      size: 2 * 2 ** 30,
      free: 2 * 2 ** 30,
      extentSize: 4 << 20,
      extentCount: 512,
      freeExtentCount: 512,
      tags: vg.tags,
    })),
    lvs: [...this.lvs].map(([key, lv]) => ({
      vgName: key.split("/")[0]!,
      name: key.split("/")[1]!,
      uuid: `lv-${key}`,
      size: 1 << 20,
      attr: lv.attr,
      tags: [],
    })),
  });

  /** Identity probe seams: every device of the node is a block device named by itself. */
  readonly identity = {
    realpath: async (p: string) => p,
    isBlockDevice: async (p: string) => this.devices.has(p),
    readSysfs: async () => undefined,
    readSysfsBytes: async () => undefined,
    readPvUuid: async (device: string) => this.pvs.get(device)?.uuid,
  };
}

/** A planner over a FakeNode: every selected device (selector values of key "path") becomes a PV of its group. */
export const fakePlanner: Planner = {
  planNode(inventory, spec, options) {
    const actions: PlanAction[] = [];
    const volumeGroups: NodePlan["volumeGroups"][number][] = [];
    for (const vg of spec.volumeGroups) {
      const wanted = selectedPaths(spec, vg.name).filter((d) => inventory.devices.some((x) => x.kname === d));
      const claimed = wanted.map((kname) => {
        const pv = inventory.pvs.find((p) => p.device === kname);
        const dev = inventory.devices.find((x) => x.kname === kname)!;
        const id = dev.serial ? `serial:${dev.serial}` : pv ? `pv:${pv.uuid}` : `kname:${kname}`;
        return {
          kname,
          id,
          size: dev.size,
          member: pv?.vgName === vg.name,
          ...(dev.signatures.length ? { wipe: dev.signatures.map((s) => s.type) } : {}),
        };
      });
      volumeGroups.push({ name: vg.name, claimed, excluded: [] });
      for (const c of claimed) {
        if (c.wipe && vg.forceWipeDevicesAndDestroyAllData)
          actions.push({
            op: "wipefs",
            argv: ["wipefs", "--all", c.kname],
            volumeGroup: vg.name,
            device: c.kname,
            deviceId: c.id,
            reason: "wipe",
            destructive: true,
            signatures: c.wipe.map((type) => ({ type })),
          });
        if (!inventory.pvs.some((p) => p.device === c.kname))
          actions.push({
            op: "pvcreate",
            argv: ["pvcreate", c.kname],
            volumeGroup: vg.name,
            device: c.kname,
            deviceId: c.id,
            reason: "new PV",
          });
      }
      const exists = inventory.vgs.some((v) => v.name === vg.name);
      const outside = claimed.filter((c) => !c.member);
      if (!exists && claimed.length)
        actions.push({
          op: "vgcreate",
          argv: ["vgcreate", "--addtag", OWNER_TAG, vg.name, ...claimed.map((c) => c.kname)],
          volumeGroup: vg.name,
          devices: claimed.map((c) => c.kname),
          deviceIds: claimed.map((c) => c.id),
          reason: "new VG",
        });
      else if (exists)
        for (const c of outside)
          actions.push({
            op: "vgextend",
            argv: ["vgextend", vg.name, c.kname],
            volumeGroup: vg.name,
            device: c.kname,
            deviceId: c.id,
            reason: "grow",
          });
    }
    const lvmd = { "socket-name": "/run/topolvm/lvmd.sock", "device-classes": [] };
    const content = `${JSON.stringify(lvmd)}\n`;
    if (
      options.currentLvmdConfig === undefined ||
      JSON.stringify(options.currentLvmdConfig) !== JSON.stringify(lvmd)
    )
      actions.push({
        op: "write-lvmd-config",
        argv: [],
        file: { path: options.lvmdConfigPath ?? "/etc/topolvm/lvmd.yaml", content },
        reason: "lvmd",
      });
    return withHash({ node: inventory.node, selected: true, volumeGroups, actions, blocked: [], lvmd });
  },
  planTeardown(inventory, spec, options) {
    const actions: PlanAction[] = [];
    for (const vg of spec.volumeGroups) {
      if (options.volumeGroup && vg.name !== options.volumeGroup) continue;
      if (!inventory.vgs.some((v) => v.name === vg.name)) continue;
      actions.push({ op: "vgremove", argv: ["vgremove", vg.name], volumeGroup: vg.name, reason: "teardown" });
      for (const pv of inventory.pvs.filter((p) => p.vgName === vg.name))
        actions.push({
          op: "pvremove",
          argv: ["pvremove", pv.device],
          volumeGroup: vg.name,
          device: pv.device,
          deviceId: `pv:${pv.uuid}`,
          reason: "labels",
        });
    }
    return withHash({
      node: inventory.node,
      selected: true,
      volumeGroups: [],
      actions,
      blocked: [],
      lvmd: { "device-classes": [] },
    });
  },
};

/** A spec with one volume group selecting devices by path. */
export function specFor(
  groups: Record<string, readonly string[]>,
  extra: Partial<LVMNodeSpec["volumeGroups"][number]> = {},
): LVMNodeSpec {
  return {
    volumeGroups: Object.entries(groups).map(([name, paths]) => ({
      name,
      deviceSelector: {
        deviceSelectorTerms: [{ matchExpressions: [{ key: "path", operator: "In", values: [...paths] }] }],
      },
      ...extra,
    })),
  };
}

function selectedPaths(spec: LVMNodeSpec, vg: string): string[] {
  const group = spec.volumeGroups.find((v) => v.name === vg)!;
  return group.deviceSelector.deviceSelectorTerms.flatMap((t) =>
    t.matchExpressions.flatMap((e) => e.values ?? []),
  );
}

function withHash(plan: Omit<NodePlan, "hash">): NodePlan {
  return { ...plan, hash: sha256Canonical(plan) };
}
