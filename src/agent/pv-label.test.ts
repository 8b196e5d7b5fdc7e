import { parsePvLabel, readPvUuid } from "./pv-label";

/** Sector 1 of a loop device right after `pvcreate` (lvm2 2.03.16); `pvs -o pv_uuid` printed the UUID below. */
const REAL_LABEL_SECTOR = Buffer.from(
  "TEFCRUxPTkUBAAAAAAAAANhF248gAAAATFZNMiAwMDE3ODhpMmhvWUJZY3dtVFFUMUtsVENwdnJuMGRJZUpySQAAAAEAAAAAAAAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAEAAAAAAAAADwDwAAAAAAAAAAAAAAAAAAAAAAAAAAAAIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
  "base64",
);
const UUID = "788i2h-oYBY-cwmT-QT1K-lTCp-vrn0-dIeJrI";

function deviceStart(labelSector: Buffer, at = 1): Buffer {
  const buf = Buffer.alloc(2048);
  labelSector.copy(buf, at * 512);
  return buf;
}

describe("parsePvLabel", () => {
  it("reads the UUID of a real LVM2 label", () => {
    expect(parsePvLabel(deviceStart(REAL_LABEL_SECTOR))).toBe(UUID);
  });

  it("finds nothing on a blank device, or a label in the wrong sector", () => {
    expect(parsePvLabel(Buffer.alloc(2048))).toBeUndefined();
    expect(parsePvLabel(deviceStart(REAL_LABEL_SECTOR, 2))).toBeUndefined(); // sector_xl says 1
  });

  it("rejects a label whose checksum does not match (a damaged or forged label)", () => {
    const damaged = Buffer.from(REAL_LABEL_SECTOR);
    damaged[40] = damaged[40]! ^ 0x01;
    expect(parsePvLabel(deviceStart(damaged))).toBeUndefined();
  });

  it("reads through the given reader", async () => {
    const reads: Array<[string, number]> = [];
    const uuid = await readPvUuid(
      "/dev/loop9",
      async (d, n) => (reads.push([d, n]), deviceStart(REAL_LABEL_SECTOR)),
    );
    expect(uuid).toBe(UUID);
    expect(reads).toEqual([["/dev/loop9", 2048]]);
  });
});
