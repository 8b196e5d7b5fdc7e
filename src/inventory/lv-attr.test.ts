import fc from "fast-check";
import { parseLvAttr, type LvAttr } from "./lv-attr";

const base: LvAttr = {
  volumeType: "linear",
  permissions: "writeable",
  allocation: "inherited",
  allocationLocked: false,
  fixedMinor: false,
  state: "inactive",
  active: false,
  suspended: false,
  open: false,
  targetType: "none",
  zeroing: false,
  health: "ok",
  skipActivation: false,
};

describe("parseLvAttr", () => {
  it.each<[string, string, Partial<LvAttr>]>([
    [
      "twi-aotz--",
      "active, open thin pool with zeroing",
      {
        volumeType: "thin-pool",
        state: "active",
        active: true,
        open: true,
        targetType: "thin",
        zeroing: true,
      },
    ],
    [
      "twi-a-tz--",
      "active thin pool, not open",
      { volumeType: "thin-pool", state: "active", active: true, targetType: "thin", zeroing: true },
    ],
    [
      "Vwi-a-tz--",
      "active thin volume",
      { volumeType: "thin-volume", state: "active", active: true, targetType: "thin", zeroing: true },
    ],
    [
      "Vwi---tz-k",
      "inactive thin volume skipped on activation",
      { volumeType: "thin-volume", targetType: "thin", zeroing: true, skipActivation: true },
    ],
    ["-wi-a-----", "active linear", { state: "active", active: true }],
    ["-wi-------", "inactive linear", {}],
    [
      "-wi-XX----",
      "linear, state unknown (recorded on a host without device-mapper)",
      { state: "unknown", active: undefined, open: undefined },
    ],
    [
      "swi-a-s---",
      "active snapshot",
      { volumeType: "snapshot", state: "active", active: true, targetType: "snapshot" },
    ],
    [
      "owi-aos---",
      "open origin of a snapshot",
      { volumeType: "origin", state: "active", active: true, open: true, targetType: "snapshot" },
    ],
    ["ewi-------", "pool metadata spare", { volumeType: "metadata" }],
    [
      "Twi-ao----",
      "thin pool data",
      { volumeType: "thin-pool-data", state: "active", active: true, open: true },
    ],
    [
      "twi-aotzD-",
      "thin pool out of data space",
      {
        volumeType: "thin-pool",
        state: "active",
        active: true,
        open: true,
        targetType: "thin",
        zeroing: true,
        health: "out-of-data-space",
      },
    ],
    [
      "twi-cotzM-",
      "thin pool needing check, metadata read-only",
      {
        volumeType: "thin-pool",
        state: "thin-pool-check-needed",
        active: true,
        open: true,
        targetType: "thin",
        zeroing: true,
        health: "metadata-read-only",
      },
    ],
    [
      "rwi-a-r-p-",
      "partial raid",
      { volumeType: "raid", state: "active", active: true, targetType: "raid", health: "partial" },
    ],
    [
      "-wI-s-----",
      "suspended linear locked during pvmove",
      { allocationLocked: true, state: "suspended", active: true, suspended: true },
    ],
    [
      "-ri-d----k",
      "read-only, mapped without table",
      { permissions: "read-only", state: "mapped-without-table", skipActivation: true },
    ],
    [
      "-Rcma-----",
      "read-only activation, contiguous, fixed minor",
      {
        permissions: "read-only-activation",
        allocation: "contiguous",
        fixedMinor: true,
        state: "active",
        active: true,
      },
    ],
  ])("%s: %s", (attr, _what, expected) => {
    expect(parseLvAttr(attr)).toEqual({ ...base, ...expected });
  });

  it("decodes letters it does not know as unknown instead of failing", () => {
    expect(parseLvAttr("Qwi-a-Q-Q-")).toMatchObject({
      volumeType: "unknown",
      targetType: "unknown",
      health: "unknown",
    });
  });

  it.each(["", "-wi-a----", "-wi-a------"])("rejects %j: lv_attr has 10 characters", (attr) => {
    expect(() => parseLvAttr(attr)).toThrow(`lv_attr ${JSON.stringify(attr)}: expected 10 characters`);
  });

  it("decodes every 10-character string without throwing, and 'active' only from the state letter", () => {
    const chars = fc.constantFrom(..."-abcdehiklmnoprsStTuvVwXzCDFIMORe");
    fc.assert(
      fc.property(fc.array(chars, { minLength: 10, maxLength: 10 }), (cs) => {
        const attr = cs.join("");
        const decoded = parseLvAttr(attr);
        const other = parseLvAttr(attr.slice(0, 4) + "-" + attr.slice(5));
        expect(other.active).toBe(false);
        expect(decoded.skipActivation).toBe(attr[9] === "k");
      }),
    );
  });
});
