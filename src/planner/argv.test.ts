import {
  lvchangeDeactivateArgv,
  lvcreateThinPoolArgv,
  lvextendThinPoolArgv,
  lvremoveArgv,
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
