import {
  DeviceIdentityError,
  parseDeviceId,
  verifyDeviceIdentity,
  type IdentityProbeDeps,
} from "./device-identity";
import type { Runner } from "./lvm-runner";

/** A machine with /dev/sdb (serial S1, wwn 0x5000c5, PV label U1), a by-id link to it, and /dev/sdc (nothing). */
function machine(
  overrides: {
    lsblk?: { wwn: string | null; serial: string | null };
    sysfs?: Record<string, string>;
    sysfsBytes?: Record<string, Buffer>;
  } = {},
) {
  const commands: string[][] = [];
  const run: Runner = async (argv) => {
    commands.push([...argv]);
    const device = argv.at(-1)!;
    const row =
      device === "/dev/sdb"
        ? (overrides.lsblk ?? { wwn: "0x5000c5", serial: "S1" })
        : { wwn: null, serial: null };
    return {
      argv,
      stdout: JSON.stringify({ blockdevices: [{ kname: device, ...row }] }),
      stderr: "",
      durationMs: 1,
    };
  };
  const links: Record<string, string> = {
    "/dev/disk/by-id/wwn-0x5000c5": "/dev/sdb",
    "/dev/sdb": "/dev/sdb",
    "/dev/sdc": "/dev/sdc",
  };
  const deps: IdentityProbeDeps = {
    run,
    realpath: async (p) => {
      if (!(p in links)) throw new Error("ENOENT");
      return links[p]!;
    },
    isBlockDevice: async (p) => p === "/dev/sdb" || p === "/dev/sdc",
    readSysfs: async (p) => overrides.sysfs?.[p],
    readSysfsBytes: async (p) => overrides.sysfsBytes?.[p],
    readPvUuid: async (device) => (device === "/dev/sdb" ? "U1" : undefined),
  };
  return { deps, commands };
}

describe("parseDeviceId", () => {
  it.each([
    ["kname:/dev/sdb", { kind: "kname", path: "/dev/sdb" }],
    ["by-id:/dev/disk/by-id/wwn-0x5", { kind: "by-id", link: "/dev/disk/by-id/wwn-0x5" }],
    ["by-id:wwn-0x5", { kind: "by-id", link: "/dev/disk/by-id/wwn-0x5" }],
    ["pv:U1", { kind: "pv", uuid: "U1" }],
    [
      "wwn:0x5+serial:S1",
      {
        kind: "hardware",
        parts: [
          ["wwn", "0x5"],
          ["serial", "S1"],
        ],
      },
    ],
    ["serial:S1", { kind: "hardware", parts: [["serial", "S1"]] }],
    ["uuid:whatever", { kind: "unknown" }],
  ])("%s", (id, parsed) => expect(parseDeviceId(id)).toEqual(parsed));
});

describe("verifyDeviceIdentity", () => {
  it("accepts a device with every expected identity", async () => {
    const { deps } = machine();
    await expect(
      verifyDeviceIdentity(deps, "/dev/sdb", [
        "kname:/dev/sdb",
        "by-id:/dev/disk/by-id/wwn-0x5000c5",
        "pv:U1",
        "wwn:0x5000C5+serial:S1",
      ]),
    ).resolves.toBeUndefined();
  });

  it.each([
    ["another kname", "kname:/dev/sdc", /found kname:\/dev\/sdb/],
    ["a by-id link pointing elsewhere", "by-id:/dev/disk/by-id/missing", /missing/],
    ["another PV", "pv:U2", /found pv:U1/],
    ["another serial", "wwn:0x5000c5+serial:S2", /found serial:S1/],
    ["an unknown id format", "uuid:x", /format this agent does not know/],
  ])("refuses %s", async (_what, id, message) => {
    const { deps } = machine();
    const e = await verifyDeviceIdentity(deps, "/dev/sdb", [id]).catch((err) => err);
    expect(e).toBeInstanceOf(DeviceIdentityError);
    expect(e.message).toMatch(message);
  });

  it("refuses a device that is not a PV when a PV identity is expected", async () => {
    const { deps } = machine();
    await expect(verifyDeviceIdentity(deps, "/dev/sdc", ["pv:U1"])).rejects.toThrow(/not a physical volume/);
  });

  it("refuses a path that is not a block device", async () => {
    const { deps } = machine();
    await expect(verifyDeviceIdentity(deps, "/dev/sdz", ["kname:/dev/sdz"])).rejects.toThrow(
      /no such block device/,
    );
  });

  it("takes a SCSI disk's serial from its unit serial page, as discovery does", async () => {
    // recorded in the qemu guest: scsi-hd with serial=SN-BBB222, no udev, no serial file
    const { deps } = machine({
      lsblk: { wwn: null, serial: null },
      sysfs: { "/sys/class/block/sdb/device/wwid": "naa.5000c5\n" },
      sysfsBytes: {
        "/sys/class/block/sdb/device/vpd_pg80": Buffer.from("00800009534e2d424242323232", "hex"),
      },
    });
    await expect(
      verifyDeviceIdentity(deps, "/dev/sdb", ["wwn:0x5000c5+serial:SN-BBB222"]),
    ).resolves.toBeUndefined();
    await expect(verifyDeviceIdentity(deps, "/dev/sdb", ["serial:SN-OTHER"])).rejects.toThrow(
      "found serial:SN-BBB222",
    );
  });

  it("falls back to sysfs when lsblk (without udev) prints no serial or wwn", async () => {
    const { deps } = machine({
      lsblk: { wwn: null, serial: null },
      sysfs: { "/sys/class/block/sdb/device/wwid": "naa.5000c5\n", "/sys/class/block/sdb/serial": "S1" },
    });
    await expect(verifyDeviceIdentity(deps, "/dev/sdb", ["wwn:0x5000c5+serial:S1"])).resolves.toBeUndefined();
  });

  it("probes only what the identity needs: kname, by-id and PV checks run no command", async () => {
    const { deps, commands } = machine();
    await verifyDeviceIdentity(deps, "/dev/sdb", [
      "kname:/dev/sdb",
      "by-id:/dev/disk/by-id/wwn-0x5000c5",
      "pv:U1",
    ]);
    expect(commands).toEqual([]);
  });
});
