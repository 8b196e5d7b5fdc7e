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
  it("writes our pid, refuses a second holder, and empties the file on release", async () => {
    const release = await lockStateDir(dir);
    expect(fs.readFileSync(path.join(dir, LOCK_FILE), "utf8")).toBe(`${process.pid}\n`);
    await expect(lockStateDir(dir, 1)).rejects.toThrow(`is in use by another agent (pid ${process.pid}`);
    release();
    expect(fs.readFileSync(path.join(dir, LOCK_FILE), "utf8")).toBe("");
    (await lockStateDir(dir))(); // free again once the holder has let go
  });

  it("ignores a pid left in the file: only the kernel lock counts", async () => {
    fs.writeFileSync(path.join(dir, LOCK_FILE), `${process.ppid}\n`);
    (await lockStateDir(dir))();
  });
});
