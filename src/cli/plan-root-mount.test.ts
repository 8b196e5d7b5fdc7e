import type { RawNodeInventory } from "../inventory/types";
import { runPlan } from "./plan";

/**
 * A btrfs root mounted as /dev/root with an anonymous device number (0:33): neither the number nor the
 * source names a device lsblk lists, and lsblk itself shows no mount point. Nothing may then be planned
 * for any disk of that node: the root filesystem could be on any of them.
 */
const blockdevices = [
  {
    name: "/dev/sda",
    kname: "/dev/sda",
    path: "/dev/sda",
    type: "disk",
    size: 64 * 2 ** 30,
    ro: false,
    rm: false,
    mountpoints: [null],
    children: [
      {
        name: "/dev/sda1",
        kname: "/dev/sda1",
        path: "/dev/sda1",
        type: "part",
        size: 8 * 2 ** 30,
        ro: false,
        rm: false,
        pkname: "/dev/sda",
        mountpoints: [null],
      },
      {
        name: "/dev/sda2",
        kname: "/dev/sda2",
        path: "/dev/sda2",
        type: "part",
        size: 56 * 2 ** 30,
        ro: false,
        rm: false,
        pkname: "/dev/sda",
        mountpoints: [null],
      },
    ],
  },
  {
    name: "/dev/sdb",
    kname: "/dev/sdb",
    path: "/dev/sdb",
    type: "disk",
    size: 64 * 2 ** 30,
    ro: false,
    rm: false,
    mountpoints: [null],
  },
];

function inventory(mounts: string, links: Record<string, string> = {}): string {
  const node: RawNodeInventory = {
    name: "n1",
    labels: {},
    lsblk: { blockdevices },
    lvm: null,
    signatures: [
      { device: "/dev/sda1", offset: "0x10040", type: "btrfs", uuid: "1111-root", usage: "filesystem" },
    ],
    probed: ["/dev/sda", "/dev/sda1", "/dev/sda2", "/dev/sdb"],
    links,
    mounts,
  };
  return JSON.stringify({ nodes: [node] });
}

const nodeset = `apiVersion: lvm.topolvm.io/v2alpha1
kind: LVMNodeSet
metadata: { name: wipe }
spec:
  template:
    volumeGroups:
      - name: vg
        forceWipeDevicesAndDestroyAllData: true
        deviceSelector:
          deviceSelectorTerms:
            - matchExpressions:
                - { key: kname, operator: In, values: [/dev/sda1, /dev/sdb] }
`;

/** `expected`: the exit code; 3 when no device is usable (the volume group is blocked). */
async function plan(inv: string, expected = 0) {
  const files: Record<string, string> = { "inv.json": inv, "ns.yaml": nodeset };
  const out: string[] = [];
  const err: string[] = [];
  const code = await runPlan({
    argv: ["--inventory", "inv.json", "--nodeset", "ns.yaml", "--json"],
    readFile: async (f) => files[f]!,
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
  });
  expect({ code, stderr: err.join("") }).toEqual({ code: expected, stderr: "" });
  return JSON.parse(out.join("")) as {
    nodes: {
      volumeGroups: { claimed: unknown[]; excluded: { kname: string; reasons: string[] }[] }[];
      actions?: { argv: string[] }[];
    }[];
  };
}

const unresolved = (source: string) =>
  `/dev/sda1 may hold the root filesystem: / is mounted from ${source}, which matches no device in the inventory, so no device is used until it does`;

describe("an unresolved root mount makes every candidate unsafe", () => {
  test.each([
    [
      "mountinfo, btrfs /dev/root on an anonymous device number",
      "27 1 0:33 /@ / rw,relatime - btrfs /dev/root rw\n",
      {},
      "/dev/root (btrfs, 0:33)",
    ],
    ["/proc/mounts, btrfs /dev/root", "/dev/root / btrfs rw,relatime 0 0\n", {}, "/dev/root (btrfs)"],
    [
      "a by-uuid source whose link is missing",
      "/dev/disk/by-uuid/1111-root / btrfs rw 0 0\n",
      { "/dev/disk/by-uuid/2222-other": "/dev/sdb" },
      "/dev/disk/by-uuid/1111-root (btrfs)",
    ],
  ])("%s", async (_name, mounts, links, source) => {
    const doc = await plan(inventory(mounts, links), 3);
    const text = JSON.stringify(doc);
    expect(text).not.toContain("wipefs");
    const vg = doc.nodes[0]!.volumeGroups[0]!;
    expect(vg.claimed).toEqual([]);
    expect(vg.excluded.map((e) => e.kname)).toEqual(["/dev/sda1", "/dev/sdb"]);
    expect(vg.excluded[0]!.reasons).toContain(unresolved(source));
    expect(vg.excluded[1]!.reasons).toEqual([unresolved(source).replace("/dev/sda1", "/dev/sdb")]);
  });

  test.each([
    ["the root resolves by its device number", "27 1 8:2 / / rw - ext4 /dev/sda2 rw\n", {}],
    [
      "the root resolves by its by-uuid link",
      "/dev/disk/by-uuid/3333 / ext4 rw 0 0\n",
      { "/dev/disk/by-uuid/3333": "/dev/sda2" },
    ],
    ["an overlay root (a container) names no block device", "overlay / overlay rw 0 0\n", {}],
    ["no mounts recorded", "", {}],
  ])("%s: /dev/sdb is claimed and /dev/sda1 wiped", async (_name, mounts, links) => {
    const doc = await plan(inventory(mounts, links));
    const vg = doc.nodes[0]!.volumeGroups[0]!;
    expect(vg.excluded).toEqual([]);
    expect(JSON.stringify(doc)).toContain('"wipefs"');
  });
});
