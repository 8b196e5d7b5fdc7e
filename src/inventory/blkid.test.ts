import { loadRawFixture } from "../../test/fixtures/inventory/load";
import { blkidArgv, blkidFacts, parseBlkidExport } from "./blkid";

describe("blkidFacts on recorded output", () => {
  const blkid = loadRawFixture("host-loop-edge-2").blkid ?? {};
  const facts = Object.values(blkid).map(blkidFacts);

  it("reads GPT partition entry names and types, unescaping blkid's backslashes", () => {
    const parts = facts.filter((f) => f.partlabel !== undefined);
    expect(parts.map((f) => [f.partlabel, f.parttype])).toEqual([
      ["EFI System", "c12a7328-f81f-11d2-ba4b-00a0c93ec93b"],
      ["data", "0fc63daf-8483-4772-8e79-3d69d8477de4"],
    ]);
  });

  it("reads the content type and usage, e.g. an LVM PV on the data partition and a swap disk", () => {
    expect(facts.filter((f) => f.type).map((f) => [f.type, f.usage])).toEqual([
      ["LVM2_member", "raid"],
      ["swap", "other"],
    ]);
    expect(facts.find((f) => f.type === "swap")?.label).toBe("inv-swap");
  });

  it("reads the partition table type of the disk, and nothing from blank devices", () => {
    expect(facts.filter((f) => f.pttype).map((f) => f.pttype)).toEqual(["gpt"]);
    expect(facts.filter((f) => Object.keys(f).length === 0)).toHaveLength(2);
  });
});

describe("parseBlkidExport", () => {
  it.each([
    ["", {}],
    ["TYPE=xfs\n", { TYPE: "xfs" }],
    ["LABEL=my\\ data\\$\nUUID=1-2\n", { LABEL: "my data$", UUID: "1-2" }],
    ["garbage line\nA=b=c\n", { A: "b=c" }],
  ])("%j", (text, expected) => {
    expect(parseBlkidExport(text)).toEqual(expected);
  });
});

describe("blkidArgv", () => {
  it("probes low-level (-p), read-only, in export format", () => {
    expect(blkidArgv("/dev/sdb1")).toEqual(["blkid", "-p", "-o", "export", "/dev/sdb1"]);
  });
});
