import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Journal, JOURNAL_FILE, readJournal, type OperationStart } from "./journal";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-journal-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const start = (op: string, extra: Partial<OperationStart> = {}): OperationStart => ({
  type: "operation-start",
  op,
  kind: "apply",
  at: "2026-11-22T00:00:00.000Z",
  approvedHash: `hash-${op}`,
  planHash: `hash-${op}`,
  specDigest: "digest",
  spec: { volumeGroups: [] },
  devices: [{ kname: "/dev/loop3", id: "kname:/dev/loop3" }],
  actionCount: 2,
  ...extra,
});
const at = "2026-11-22T00:00:01.000Z";

describe("Journal", () => {
  it("appends JSON lines that survive a reopen, and groups them by operation", () => {
    const j = new Journal({ stateDir: dir });
    j.append(start("a"));
    j.append({
      type: "action-start",
      op: "a",
      index: 0,
      at,
      action: "pvcreate",
      argv: ["pvcreate", "/dev/loop3"],
      device: "/dev/loop3",
    });
    j.append({
      type: "action-finish",
      op: "a",
      index: 0,
      at,
      action: "pvcreate",
      device: "/dev/loop3",
      durationMs: 5,
    });
    j.append({ type: "operation-finish", op: "a", at, result: "succeeded" });
    const lines = fs.readFileSync(path.join(dir, JOURNAL_FILE), "utf8").trim().split("\n");
    expect(lines).toHaveLength(4);
    expect(JSON.parse(lines[0]!).type).toBe("operation-start");
    const reopened = new Journal({ stateDir: dir });
    expect(reopened.operations()).toHaveLength(1);
    expect(reopened.last()?.finish?.result).toBe("succeeded");
    expect(reopened.last()?.actions).toHaveLength(2);
    expect(reopened.interrupted()).toBeUndefined();
  });

  it("calls an operation without a finish record interrupted", () => {
    const j = new Journal({ stateDir: dir });
    j.append(start("a"));
    j.append({ type: "operation-finish", op: "a", at, result: "failed", error: { message: "x" } });
    j.append(start("b"));
    j.append({
      type: "action-start",
      op: "b",
      index: 0,
      at,
      action: "pvcreate",
      argv: ["pvcreate", "/dev/loop3"],
    });
    expect(new Journal({ stateDir: dir }).interrupted()?.start.op).toBe("b");
  });

  it("cuts off a torn last line (a crash inside write) and keeps appending on a clean line", () => {
    const file = path.join(dir, JOURNAL_FILE);
    const j = new Journal({ stateDir: dir });
    j.append(start("a"));
    fs.appendFileSync(file, '{"type":"action-start","op":"a","ind');
    const reopened = new Journal({ stateDir: dir });
    expect(fs.readFileSync(file, "utf8").endsWith("\n")).toBe(true);
    reopened.append({ type: "operation-finish", op: "a", at, result: "succeeded" });
    expect(readJournal(file).records.map((r) => r.type)).toEqual(["operation-start", "operation-finish"]);
  });

  it("refuses a journal damaged in the middle instead of guessing", () => {
    const file = path.join(dir, JOURNAL_FILE);
    fs.writeFileSync(file, `${JSON.stringify(start("a"))}\nnot json\n${JSON.stringify(start("b"))}\n`);
    expect(() => new Journal({ stateDir: dir })).toThrow(/line 2 is not a journal record/);
  });

  it("remembers every finished wipe by device identity, skipped ones excluded", () => {
    const j = new Journal({ stateDir: dir });
    j.append(start("a"));
    j.append({
      type: "action-finish",
      op: "a",
      index: 0,
      at,
      action: "wipefs",
      device: "/dev/sdb",
      deviceId: "wwn:0x5+serial:X",
      durationMs: 1,
    });
    j.append({
      type: "action-finish",
      op: "a",
      index: 1,
      at,
      action: "wipefs",
      device: "/dev/sdc",
      skipped: "already",
      durationMs: 0,
    });
    j.append({
      type: "action-finish",
      op: "a",
      index: 2,
      at,
      action: "wipefs",
      device: "/dev/sdd",
      durationMs: 1,
    });
    expect([...new Journal({ stateDir: dir }).wiped(new Set(["a"]))]).toEqual([
      ["wwn:0x5+serial:X", "a"],
      ["kname:/dev/sdd", "a"],
    ]);
  });

  it("compacts past its size bound, keeping the last operation and every wipe", () => {
    const j = new Journal({ stateDir: dir, compactAtBytes: 2000 });
    for (let i = 0; i < 10; i++) {
      const op = `op${i}`;
      j.append(start(op));
      if (i === 1)
        j.append({
          type: "action-finish",
          op,
          index: 0,
          at,
          action: "wipefs",
          device: "/dev/sdb",
          deviceId: "by-id:/dev/disk/by-id/x",
          durationMs: 1,
        });
      j.append({ type: "operation-finish", op, at, result: "succeeded" });
    }
    const reopened = new Journal({ stateDir: dir });
    expect(fs.statSync(path.join(dir, JOURNAL_FILE)).size).toBeLessThan(2000);
    expect(reopened.last()?.start.op).toBe("op9");
    expect(reopened.wiped(new Set(["op1"])).get("by-id:/dev/disk/by-id/x")).toBe("op1");
    expect(reopened.wiped(new Set(["op9"])).size).toBe(0);
  });

  it("creates its state directory private to root", () => {
    const stateDir = path.join(dir, "nested", "state");
    new Journal({ stateDir }).append(start("a"));
    expect(fs.statSync(stateDir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(stateDir, JOURNAL_FILE)).mode & 0o777).toBe(0o600);
  });
});
