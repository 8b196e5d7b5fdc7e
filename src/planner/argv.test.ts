import {
  lvchangeDeactivateArgv,
  lvcreateThinPoolArgv,
  lvextendThinPoolArgv,
  lvextendThinPoolMetadataArgv,
  lvremoveArgv,
  optionValue,
  parseArgv,
  pvchangeAddTagArgv,
  pvcreateArgv,
  pvmoveArgv,
  pvremoveArgv,
  vgcreateArgv,
  vgextendArgv,
  vgreduceArgv,
  vgremoveArgv,
  wipefsArgv,
} from "./argv";

/** The exact commands; each was run as written against lvm2 2.03.16 (loop devices, and a qemu guest for thin pools and pvmove). */
test.each<[string, string[], string]>([
  ["wipefs", wipefsArgv("/dev/sdb"), "wipefs --all /dev/sdb"],
  ["pvcreate", pvcreateArgv("/dev/mapper/crypt-a"), "pvcreate /dev/mapper/crypt-a"],
  [
    "vgcreate",
    vgcreateArgv("vg1", ["/dev/sdb", "/dev/sdc"]),
    "vgcreate --addtag pulumi-lvm vg1 /dev/sdb /dev/sdc",
  ],
  ["vgextend", vgextendArgv("vg1", "/dev/sdd"), "vgextend vg1 /dev/sdd"],
  [
    "pvchange",
    pvchangeAddTagArgv("pulumi-lvm.kname=sdd", "/dev/sdd"),
    "pvchange --addtag pulumi-lvm.kname=sdd /dev/sdd",
  ],
  [
    "pvmove",
    pvmoveArgv("/dev/sdb", ["/dev/sdc", "/dev/sdd"]),
    "pvmove --interval 1 /dev/sdb /dev/sdc /dev/sdd",
  ],
  ["vgreduce", vgreduceArgv("vg1", "/dev/sdb"), "vgreduce vg1 /dev/sdb"],
  ["pvremove", pvremoveArgv("/dev/sdb"), "pvremove /dev/sdb"],
  [
    "lvcreate, exact",
    lvcreateThinPoolArgv({
      vg: "vg1",
      pool: "pool0",
      extents: 511,
      chunkSizeBytes: 128 * 1024,
      metadataSizeBytes: 4 * 1024 ** 2,
    }),
    "lvcreate --type thin-pool --name pool0 --extents 511 --chunksize 128k --poolmetadatasize 4m --zero y --addtag pulumi-lvm vg1",
  ],
  [
    "lvcreate, by lvm",
    lvcreateThinPoolArgv({ vg: "vg1", pool: "pool0", extents: "90%VG" }),
    "lvcreate --type thin-pool --name pool0 --extents 90%VG --zero y --addtag pulumi-lvm vg1",
  ],
  ["lvextend", lvextendThinPoolArgv("vg1", "pool0", 817), "lvextend --extents 817 vg1/pool0"],
  [
    "lvextend, by lvm",
    lvextendThinPoolArgv("vg1", "pool0", "+100%FREE"),
    "lvextend --extents +100%FREE vg1/pool0",
  ],
  ["lvchange", lvchangeDeactivateArgv("vg1", "pool0"), "lvchange --activate n vg1/pool0"],
  ["lvremove", lvremoveArgv("vg1", "pool0"), "lvremove vg1/pool0"],
  ["vgremove", vgremoveArgv("vg1"), "vgremove vg1"],
  ["vgremove --force", vgremoveArgv("vg1", true), "vgremove --force vg1"],
])("%s", (_name, argv, command) => {
  expect(argv.join(" ")).toBe(command);
  expect(argv).not.toContain("--yes");
  expect(argv).not.toContain("-ff");
});

/** What the agent's checks and the simulator read back from each builder's argv: one reader for both. */
test.each<[string, string[], string[], Record<string, string | true>]>([
  ["wipefs", wipefsArgv("/dev/sdb"), ["/dev/sdb"], { "--all": true }],
  [
    "vgcreate",
    vgcreateArgv("vg-data", ["/dev/sdb", "/dev/sdc"]),
    ["vg-data", "/dev/sdb", "/dev/sdc"],
    { "--addtag": "pulumi-lvm" },
  ],
  [
    "pvchange",
    pvchangeAddTagArgv("pulumi-lvm-disk:abc", "/dev/sdb"),
    ["/dev/sdb"],
    { "--addtag": "pulumi-lvm-disk:abc" },
  ],
  ["pvmove", pvmoveArgv("/dev/sdb", ["/dev/sdc"]), ["/dev/sdb", "/dev/sdc"], { "--interval": "1" }],
  [
    "lvcreate thin pool",
    lvcreateThinPoolArgv({ vg: "vg", pool: "pool0", extents: "90%VG", chunkSizeBytes: 65536 }),
    ["vg"],
    {
      "--type": "thin-pool",
      "--name": "pool0",
      "--extents": "90%VG",
      "--chunksize": "64k",
      "--zero": "y",
      "--addtag": "pulumi-lvm",
    },
  ],
  ["lvextend", lvextendThinPoolArgv("vg", "pool0", "+100%FREE"), ["vg/pool0"], { "--extents": "+100%FREE" }],
  [
    "lvextend metadata",
    lvextendThinPoolMetadataArgv("vg", "pool0", 8388608),
    ["vg/pool0"],
    { "--poolmetadatasize": "8388608b" },
  ],
  ["vgremove --force", vgremoveArgv("vg", true), ["vg"], { "--force": true }],
])("parseArgv: %s", (_name, argv, positionals, options) => {
  const parsed = parseArgv(argv);
  expect(parsed.command).toBe(argv[0]);
  expect(parsed.positionals).toEqual(positionals);
  expect(Object.fromEntries(parsed.options)).toEqual(options);
});

test("parseArgv: --name=value, a value option without its value, the first of repeated options", () => {
  const parsed = parseArgv(["lvcreate", "--name=pool0", "--addtag", "a", "--addtag", "b", "vg", "--extents"]);
  expect(parsed.positionals).toEqual(["vg"]);
  expect(optionValue(parsed, "-n", "--name")).toBe("pool0");
  expect(optionValue(parsed, "--addtag")).toBe("a");
  expect(optionValue(parsed, "--extents")).toBeUndefined();
  expect(optionValue(parseArgv(["vgremove", "--force", "vg"]), "--force")).toBeUndefined();
});
