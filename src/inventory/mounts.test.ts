import { loadRawFixture } from "../../test/fixtures/inventory/load";
import { mountLinesFor, parseMounts, parseSwaps, swapLinesFor, unescapeOctal } from "./mounts";

describe("recorded /proc/self/mountinfo and /proc/swaps", () => {
  const raw = loadRawFixture("host-loop-mixed");

  it("reads the ext4 loop mount, unescaping the space in its path", () => {
    expect(parseMounts(raw.mounts ?? "")).toEqual([
      {
        source: expect.stringMatching(/^\/dev\/loop\d+$/),
        mountpoint: "/var/tmp/inv-fixtures/set/mnt/ext4 data",
        fstype: "ext4",
        majMin: expect.stringMatching(/^7:\d+$/),
      },
    ]);
  });

  it("reads the active swap device, skipping the header", () => {
    expect(parseSwaps(raw.swaps ?? "")).toEqual([expect.stringMatching(/^\/dev\/loop\d+$/)]);
  });
});

describe("parseMounts", () => {
  it("reads mountinfo with optional fields before the separator", () => {
    const line =
      "36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 shared:7 - ext3 /dev/root rw,errors=continue";
    expect(parseMounts(line)).toEqual([
      { source: "/dev/root", mountpoint: "/mnt/parent", fstype: "ext3", majMin: "98:0" },
    ]);
  });

  it("reads /proc/mounts lines", () => {
    const text =
      "/dev/sda1 /boot ext4 rw,relatime 0 0\n/dev/mapper/vg0-my\\040lv /srv/my\\040data xfs rw 0 0\n";
    expect(parseMounts(text)).toEqual([
      { source: "/dev/sda1", mountpoint: "/boot", fstype: "ext4" },
      { source: "/dev/mapper/vg0-my lv", mountpoint: "/srv/my data", fstype: "xfs" },
    ]);
  });

  it("names the line it cannot read", () => {
    expect(() => parseMounts("/dev/sda1 /boot ext4 rw\n\nnonsense\n")).toThrow(
      "line 1: expected a mountinfo or /proc/mounts line",
    );
  });
});

describe("parseSwaps", () => {
  it("reads partitions and files, unescaped", () => {
    const text =
      "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/sdb2  partition\t8388604\t0\t-2\n/swap\\040file  file\t1048572\t0\t-3\n";
    expect(parseSwaps(text)).toEqual(["/dev/sdb2", "/swap file"]);
  });

  it("rejects a line without the five columns", () => {
    expect(() => parseSwaps("Filename Type Size Used Priority\n/dev/sdb2 partition\n")).toThrow(
      "line 2: expected",
    );
  });
});

describe("mountLinesFor / swapLinesFor", () => {
  const mountinfo = [
    "22 27 0:21 / /proc rw,relatime - proc proc rw",
    "42 27 7:3 / /mnt/a\\040b rw,relatime - ext4 /dev/loop3 rw",
    "43 27 0:50 / /mnt/c rw - btrfs /dev/loop4 rw",
    "44 27 8:1 / /boot rw - ext4 /dev/sda1 rw",
  ].join("\n");

  it("keeps the lines of the given devices, by major:minor or by source", () => {
    expect(mountLinesFor(mountinfo, new Set(["7:3"]), new Set(["/dev/loop4"]))).toBe(
      "42 27 7:3 / /mnt/a\\040b rw,relatime - ext4 /dev/loop3 rw\n43 27 0:50 / /mnt/c rw - btrfs /dev/loop4 rw\n",
    );
    expect(
      mountLinesFor(
        "/dev/loop3 /mnt ext4 rw 0 0\n/dev/sda1 /boot ext4 rw 0 0\n",
        new Set(),
        new Set(["/dev/loop3"]),
      ),
    ).toBe("/dev/loop3 /mnt ext4 rw 0 0\n");
  });

  it("keeps the /proc/swaps header and the given devices' entries", () => {
    const swaps =
      "Filename Type Size Used Priority\n/dev/loop4 partition 1048572 0 -2\n/dev/sda2 partition 1 0 -3\n";
    expect(swapLinesFor(swaps, new Set(["/dev/loop4"]))).toBe(
      "Filename Type Size Used Priority\n/dev/loop4 partition 1048572 0 -2\n",
    );
  });
});

describe("unescapeOctal", () => {
  it.each([
    ["/mnt/a\\040b", "/mnt/a b"],
    ["tab\\011newline\\012backslash\\134", "tab\tnewline\nbackslash\\"],
    ["/plain", "/plain"],
  ])("%j → %j", (input, expected) => {
    expect(unescapeOctal(input)).toBe(expected);
  });
});
