import fc from "fast-check";
import { compareNatural, devPath, linkTarget } from "./device-path";

describe("devPath", () => {
  it.each([
    ["loop3", "/dev/loop3"],
    ["/dev/loop3", "/dev/loop3"],
    ["mapper/vg0-lv", "/dev/mapper/vg0-lv"],
    ["/dev//sdb", "/dev/sdb"],
  ])("%j → %j", (name, path) => {
    expect(devPath(name)).toBe(path);
  });
});

describe("linkTarget", () => {
  it.each([
    ["/dev/disk/by-id/wwn-0x5000c500a1b2c3d4", "../../sdb", "/dev/sdb"],
    ["/dev/mapper/vg0-lv", "../dm-3", "/dev/dm-3"],
    ["/dev/disk/by-uuid/abc", "/dev/sdc1", "/dev/sdc1"],
  ])("%s → %s", (link, target, resolved) => {
    expect(linkTarget(link, target)).toBe(resolved);
  });
});

describe("compareNatural", () => {
  it("orders digit runs as numbers", () => {
    const names = [
      "/dev/loop10",
      "/dev/sdb",
      "/dev/loop2",
      "/dev/sda10",
      "/dev/sda2",
      "/dev/loop2p1",
      "/dev/nvme0n1p10",
      "/dev/nvme0n1p9",
    ];
    expect([...names].sort(compareNatural)).toEqual([
      "/dev/loop2",
      "/dev/loop2p1",
      "/dev/loop10",
      "/dev/nvme0n1p9",
      "/dev/nvme0n1p10",
      "/dev/sda2",
      "/dev/sda10",
      "/dev/sdb",
    ]);
  });

  it("is a total order: antisymmetric, zero only for equal strings, and transitive", () => {
    const name = fc.stringMatching(/^[a-c0-9]{0,6}$/);
    fc.assert(
      fc.property(name, name, name, (a, b, c) => {
        expect(Math.sign(compareNatural(a, b)) + Math.sign(compareNatural(b, a))).toBe(0);
        expect(compareNatural(a, b) === 0).toBe(a === b);
        if (compareNatural(a, b) < 0 && compareNatural(b, c) < 0)
          expect(compareNatural(a, c)).toBeLessThan(0);
      }),
      { numRuns: 2000 },
    );
  });
});
