import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LOCK_FILE, lockStateDir } from "./state-lock";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-lock-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("lockStateDir", () => {
  it("writes our pid and removes it on release", () => {
    const release = lockStateDir(dir);
    expect(fs.readFileSync(path.join(dir, LOCK_FILE), "utf8")).toBe(`${process.pid}\n`);
    release();
    expect(fs.existsSync(path.join(dir, LOCK_FILE))).toBe(false);
  });

  it("refuses while another live process holds it", () => {
    fs.writeFileSync(path.join(dir, LOCK_FILE), `${process.ppid}\n`);
    expect(() => lockStateDir(dir)).toThrow(`is in use by another agent (pid ${process.ppid}`);
  });

  it("takes over the lock of a process that died (kill -9, crash)", () => {
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
      encoding: "utf8",
    }).stdout;
    fs.writeFileSync(path.join(dir, LOCK_FILE), `${dead}\n`);
    lockStateDir(dir)();
  });
});
