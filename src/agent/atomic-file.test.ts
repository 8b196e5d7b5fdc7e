import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { writeFileAtomic } from "./atomic-file";

describe("writeFileAtomic", () => {
  it("replaces the file in one rename and leaves no temp file", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-atomic-"));
    try {
      const file = path.join(dir, "lvmd.yaml");
      fs.writeFileSync(file, "old\n");
      const inode = fs.statSync(file).ino;
      writeFileAtomic(file, "new\n", 0o640);
      expect(fs.readFileSync(file, "utf8")).toBe("new\n");
      expect(fs.statSync(file).ino).not.toBe(inode);
      expect(fs.statSync(file).mode & 0o777).toBe(0o640);
      expect(fs.readdirSync(dir)).toEqual(["lvmd.yaml"]);
      expect(() => writeFileAtomic(path.join(dir, "missing-dir", "x"), "x")).toThrow(/ENOENT/);
      expect(fs.readdirSync(dir)).toEqual(["lvmd.yaml"]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
