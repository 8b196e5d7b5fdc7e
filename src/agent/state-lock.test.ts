import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { spawnSync } from "node:child_process";
import { LOCK_EXECUTABLES, LOCK_FILE, lockStateDir } from "./state-lock";

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

  it("holds with only the image's tools on PATH (flock and sh; the image has no coreutils)", () => {
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), "agent-lock-bin-"));
    try {
      for (const tool of LOCK_EXECUTABLES) {
        const found = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
          .map((d) => path.join(d, tool))
          .find((f) => fs.existsSync(f));
        fs.symlinkSync(found!, path.join(bin, tool));
      }
      // A process of its own: jest's process.env is a copy that child_process does not read.
      const script = `
        const { lockStateDir } = require(${JSON.stringify(require.resolve("./state-lock"))});
        (async () => {
          const release = await lockStateDir(process.argv[1]);
          await new Promise((r) => setTimeout(r, 300)); // a holder that exits early has let go by now
          await lockStateDir(process.argv[1], 1).then(
            () => console.log("a second holder took the lock"),
            (e) => console.log(e.message),
          );
          release();
        })();`;
      const r = spawnSync(process.execPath, ["--import", "tsx", "-e", script, dir], {
        env: { PATH: bin },
        encoding: "utf8",
        timeout: 30_000,
      });
      expect(r.stderr).toBe("");
      expect(r.stdout).toContain("is in use by another agent");
    } finally {
      fs.rmSync(bin, { recursive: true, force: true });
    }
  });
});
