/**
 * Writes on a nearly full filesystem (issue 11, item 3): a real tmpfs of 1 MiB, filled up to a few
 * pages. write(2) then writes fewer bytes than asked and fs.writeSync returns that count instead of
 * failing; lvmd.yaml and the journal must be written whole or fail naming the file, and a journal
 * line that did not fit must not damage the journal.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { writeFileAtomic } from "../../src/agent/atomic-file";
import { Journal, JOURNAL_FILE, readJournal } from "../../src/agent/journal";
import { requireHostTier, Scratch } from "./harness";

let scratch: Scratch;
let mnt: string;

beforeAll(() => {
  requireHostTier();
  scratch = new Scratch("full-disk");
  mnt = scratch.path("tmpfs");
  fs.mkdirSync(mnt);
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m,mode=0700", "full-disk-test", mnt]);
});

afterAll(() => {
  if (mnt) execFileSync("umount", [mnt]);
  scratch?.cleanup();
});

/** Fills the filesystem so that only `pages` 4 KiB pages stay free. */
function fill(pages: number): void {
  const filler = path.join(mnt, "filler");
  fs.rmSync(filler, { force: true });
  const fd = fs.openSync(filler, "w");
  const chunk = Buffer.alloc(4096, 0x61);
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOSPC") throw e;
  } finally {
    fs.closeSync(fd);
  }
  fs.truncateSync(filler, Math.max(0, fs.statSync(filler).size - pages * 4096));
}

function free(): void {
  fs.rmSync(path.join(mnt, "filler"), { force: true });
}

describe("on a nearly full filesystem", () => {
  afterEach(free);

  it("writeFileAtomic writes the whole file or fails naming it, and leaves the old content", () => {
    const file = path.join(mnt, "lvmd.yaml");
    fs.writeFileSync(file, "device-classes: []\n");
    fill(2);
    const content = `device-classes:\n${"  - name: x\n    volume-group: y\n".repeat(4000)}`; // ~130 KiB
    expect(() => writeFileAtomic(file, content)).toThrow(new RegExp(`cannot write ${file}.*ENOSPC|${file}`));
    expect(fs.readFileSync(file, "utf8")).toBe("device-classes: []\n");
    expect(fs.readdirSync(mnt).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("a journal line that does not fit fails naming the journal, and the journal stays readable with every earlier record", () => {
    const dir = path.join(mnt, "state");
    const journal = new Journal({ stateDir: dir });
    const at = new Date().toISOString();
    journal.append({ type: "operation-finish", op: "earlier", at, result: "succeeded" });
    fill(2);
    const big = { message: "x".repeat(64 * 1024) };
    expect(() =>
      journal.append({ type: "operation-finish", op: "big", at, result: "failed", error: big }),
    ).toThrow(path.join(dir, JOURNAL_FILE));
    free();
    journal.append({ type: "operation-finish", op: "later", at, result: "succeeded" });
    const reopened = readJournal(path.join(dir, JOURNAL_FILE));
    expect(reopened.records.map((r) => r.op)).toEqual(["earlier", "later"]);
    expect(() => new Journal({ stateDir: dir })).not.toThrow();
  });
});
