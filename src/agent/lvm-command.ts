import { devicePathProblem } from "../agent-api/device-names";
import { DEVICES_FILE_CONFIG_ARGV } from "../inventory/devices-file";

export { DEVICES_FILE_CONFIG_ARGV };

/*
 * The model of a command the agent runs: which tools, how their argv is checked (allow-list, the
 * agent's devices, no --config of the caller's), and the lvm configuration every lvm command gets.
 * The runner (./lvm-runner.ts) runs it one process per command or in the lvm shell (./lvm-shell.ts).
 */

/** The tools the agent may run, and nothing else. argv[0] must be one of these bare names. */
export const LVM_TOOLS = [
  "lvm",
  "pvs",
  "vgs",
  "lvs",
  "pvcreate",
  "pvremove",
  "pvmove",
  "vgcreate",
  "vgextend",
  "vgreduce",
  "vgremove",
  "lvcreate",
  "lvextend",
  "lvremove",
  "lvchange",
  "pvchange",
] as const;
export const PROBE_TOOLS = ["wipefs", "lsblk", "blkid"] as const;
export const ALLOWED_TOOLS: readonly string[] = [...LVM_TOOLS, ...PROBE_TOOLS];

/** A command the runner refused to start: not allowed, malformed, or naming a device outside the allow-list. */
export class CommandRefusedError extends Error {
  constructor(
    readonly argv: readonly unknown[],
    readonly reason: string,
  ) {
    super(`refused to run ${JSON.stringify(argv)}: ${reason}`);
    this.name = "CommandRefusedError";
  }
}

const MAX_ARG_LENGTH = 64 * 1024;

/** Refuses argv unless it is a non-empty array of strings, an allowed tool, and names only allowed devices. */
export function validateArgv(
  argv: readonly unknown[],
  devices: readonly string[] | undefined,
): asserts argv is string[] {
  if (!Array.isArray(argv) || argv.length === 0)
    throw new CommandRefusedError(argv ?? [], "argv must be a non-empty array");
  argv.forEach((word, i) => checkWord(argv, word, `argument ${i}`));
  const tool = argv[0] as string;
  if (!ALLOWED_TOOLS.includes(tool))
    throw new CommandRefusedError(
      argv,
      `argv[0] ${JSON.stringify(tool)} is not one of ${ALLOWED_TOOLS.join(", ")}`,
    );
  for (const word of argv.slice(1) as string[]) {
    // getopt accepts unambiguous prefixes of long options: refuse every spelling of --config.
    if (word.startsWith("--conf"))
      throw new CommandRefusedError(argv, `${word}: lvm configuration is set by the runner only`);
    if (!word.startsWith("/dev/")) continue;
    // A list such as lvm's `--devices /dev/a,/dev/b` is checked device by device.
    for (const device of word.split(",")) {
      const problem = devicePathProblem(device);
      if (problem) throw new CommandRefusedError(argv, `device ${JSON.stringify(device)} ${problem}`);
      if (devices && !devices.some((d) => device === d || isPartitionOf(device, d)))
        throw new CommandRefusedError(
          argv,
          `device ${device} is not one of this agent's devices (${devices.join(", ")})`,
        );
    }
  }
  if (
    devices &&
    (PROBE_TOOLS as readonly string[]).includes(tool) &&
    !argv.slice(1).some((w) => (w as string).startsWith("/dev/"))
  )
    throw new CommandRefusedError(
      argv,
      `${tool} must name its devices when the agent is restricted to ${devices.join(", ")}`,
    );
}

export function checkWord(argv: readonly unknown[], word: unknown, what: string): void {
  if (typeof word !== "string") throw new CommandRefusedError(argv, `${what} is not a string`);
  if (word.includes("\0")) throw new CommandRefusedError(argv, `${what} contains a NUL byte`);
  if (word.length > MAX_ARG_LENGTH)
    throw new CommandRefusedError(argv, `${what} is longer than ${MAX_ARG_LENGTH} characters`);
}

/** "/dev/sdb1" of "/dev/sdb", "/dev/loop3p1" of "/dev/loop3", "/dev/nvme0n1p2" of "/dev/nvme0n1". */
function isPartitionOf(device: string, disk: string): boolean {
  return (
    device.startsWith(disk) &&
    /^p?\d+$/.test(device.slice(disk.length)) &&
    (/\d$/.test(disk) ? device[disk.length] === "p" : true)
  );
}

/** lvm commands take the config after the command name (`lvm fullreport --config ...` after the subcommand). */
export function withLvmConfig(argv: readonly string[], configString: string): string[] {
  const tool = argv[0]!;
  // An empty string (the host's devices file, no filter, nothing extra): lvm refuses `--config ""`.
  if (!(LVM_TOOLS as readonly string[]).includes(tool) || configString === "") return [...argv];
  const at = tool === "lvm" ? Math.min(2, argv.length) : 1;
  return [...argv.slice(0, at), "--config", configString, ...argv.slice(at)];
}

/**
 * Commands that read or write the host's devices file (/etc/lvm/devices/system.devices): `lvm
 * lvmdevices` (list, --adddev, --deldev) and DEVICES_FILE_CONFIG_ARGV. They get the host's devices-file
 * settings; lvm refuses lvmdevices with "Devices file not enabled" under `use_devicesfile=0`, and `lvm
 * config` would print the runner's `use_devicesfile=0` back.
 */
export function usesHostDevicesFile(argv: readonly string[]): boolean {
  return (
    argv[0] === "lvm" &&
    (argv[1] === "lvmdevices" || JSON.stringify(argv) === JSON.stringify(DEVICES_FILE_CONFIG_ARGV))
  );
}

/**
 * The `--config` string: a filter and global_filter accepting exactly `devices` (rejecting
 * everything else), the devices file off (so the host's /etc/lvm/devices/system.devices does not
 * decide what the agent sees: a PV of ours missing from it would look missing, and discovery must see
 * every allowed device; the plan keeps the file true with its own lvmdevices steps), and any extra
 * settings. `hostDevicesFile`: leave the devices file as the host has it (usesHostDevicesFile).
 */
export function lvmConfigString(
  devices: readonly string[] | undefined,
  extra: string,
  hostDevicesFile = false,
): string {
  const parts = hostDevicesFile ? [] : ["use_devicesfile=0"];
  if (devices) {
    const accept = devices.map((d) => `"a|^${regexLiteral(d)}$|"`);
    const list = `[${[...accept, '"r|.*|"'].join(",")}]`;
    parts.push(`filter=${list}`, `global_filter=${list}`);
  }
  return [parts.length ? `devices { ${parts.join(" ")} }` : "", extra.trim()].filter(Boolean).join(" ");
}

/** A device path as an lvm filter regex that matches only itself: metacharacters as one-character classes. */
function regexLiteral(devicePath: string): string {
  return devicePath.replace(/[.+]/g, (c) => `[${c}]`);
}
