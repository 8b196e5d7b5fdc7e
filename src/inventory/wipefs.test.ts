import { loadRawFixture } from "../../test/fixtures/inventory/load";
import { parseWipefsSignatures, wipefsArgv, wipefsEntries } from "./wipefs";

describe("parseWipefsSignatures on recorded output", () => {
  const byDevice = parseWipefsSignatures(loadRawFixture("host-loop-mixed").signatures ?? []);

  it("groups signatures by the device wipefs printed (the kernel name, without /dev/)", () => {
    expect([...byDevice.keys()].every((d) => /^loop\d+$/.test(d))).toBe(true);
    const types = [...byDevice.values()].map((list) => list.map((s) => s.type).join(","));
    expect(types.sort()).toEqual([
      "LVM2_member",
      "LVM2_member",
      "LVM2_member",
      "PMBR,gpt,gpt",
      "ext4",
      "swap",
    ]);
  });

  it("orders a GPT disk's signatures by offset: protective MBR, primary header, backup header at the end", () => {
    const gpt = [...byDevice.values()].find((list) => list.length === 3)!;
    expect(gpt.map((s) => [s.type, s.usage])).toEqual([
      ["PMBR", "partition-table"],
      ["gpt", "partition-table"],
      ["gpt", "partition-table"],
    ]);
    expect(gpt.map((s) => s.offset)).toEqual(["0x1fe", "0x200", `0x${(2 * 1024 ** 3 - 512).toString(16)}`]);
  });

  it("keeps uuid, label and usage, and drops wipefs's nulls", () => {
    const ext4 = [...byDevice.values()].flat().find((s) => s.type === "ext4");
    expect(ext4).toEqual({
      type: "ext4",
      offset: "0x438",
      uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      label: "inv-data",
      usage: "filesystem",
    });
    const pmbr = [...byDevice.values()].flat().find((s) => s.type === "PMBR");
    expect(pmbr).toEqual({ type: "PMBR", offset: "0x1fe", usage: "partition-table" });
  });
});

describe("parseWipefsSignatures table cases", () => {
  it("accepts wipefs's default columns (no usage, no length) and paths as device names", () => {
    const map = parseWipefsSignatures([
      { device: "/dev/sdb", offset: "0x218", type: "LVM2_member", uuid: "abc", label: null },
    ]);
    expect(map.get("/dev/sdb")).toEqual([{ type: "LVM2_member", offset: "0x218", uuid: "abc" }]);
  });

  it("sorts by offset numerically, not as text", () => {
    const map = parseWipefsSignatures([
      { device: "sdb", offset: "0x10000", type: "b" },
      { device: "sdb", offset: "0x438", type: "a" },
    ]);
    expect(map.get("sdb")!.map((s) => s.type)).toEqual(["a", "b"]);
  });

  it.each<[unknown, string]>([
    [{ offset: "0x0", type: "xfs" }, "[0].device: is required"],
    [{ device: "sdb", offset: "0x0" }, "[0].type: is required"],
    [{ device: "sdb", offset: "near the start", type: "xfs" }, '[0].offset: must be an offset like "0x218"'],
    ["sdb", "[0]: must be an object"],
  ])("rejects %j", (entry, message) => {
    expect(() => parseWipefsSignatures([entry])).toThrow(message);
  });
});

describe("wipefsEntries", () => {
  it("reads the entries of wipefs --json output", () => {
    const stdout =
      '{\n   "signatures": [\n      {"device":"loop0", "offset":"0x218", "type":"LVM2_member", "uuid":"x", "label":null}\n   ]\n}\n';
    expect(wipefsEntries(stdout)).toEqual([
      { device: "loop0", offset: "0x218", type: "LVM2_member", uuid: "x", label: null },
    ]);
  });

  it("reads a blank device's output (an empty array, as recorded) and empty output as no signatures", () => {
    expect(wipefsEntries('{\n   "signatures": [\n\n   ]\n}\n')).toEqual([]);
    expect(wipefsEntries("")).toEqual([]);
  });

  it("rejects output that is not wipefs JSON", () => {
    expect(() => wipefsEntries("/dev/sdb: 8 bytes were erased")).toThrow(
      "wipefs printed something that is not JSON",
    );
    expect(() => wipefsEntries('{"sigs": []}')).toThrow('expected {"signatures": [...]}');
  });
});

describe("wipefsArgv", () => {
  it("only lists: --no-act, and never -a/--all/-f/--force/-o/--offset", () => {
    const argv = wipefsArgv("/dev/loop3");
    expect(argv).toEqual([
      "wipefs",
      "--json",
      "--no-act",
      "--output",
      "DEVICE,OFFSET,TYPE,UUID,LABEL,LENGTH,USAGE",
      "/dev/loop3",
    ]);
    for (const erase of ["-a", "--all", "-f", "--force", "-o", "--offset", "-t", "--types"])
      expect(argv).not.toContain(erase);
  });
});
