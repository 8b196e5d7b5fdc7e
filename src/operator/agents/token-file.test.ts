import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { tokenFromFile } from "./token-file";

test("re-reads the file on every call (it may be rotated); errors never hold a token", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-token-"));
  const file = path.join(dir, "token");
  const source = tokenFromFile(file);
  await expect(source("n1")).rejects.toThrow(`cannot read the agent token ${file}`);
  fs.writeFileSync(file, "first-token\n");
  expect(await source("n1")).toBe("first-token");
  fs.writeFileSync(file, "rotated-token");
  expect(await source("n1")).toBe("rotated-token");
  fs.writeFileSync(file, " \n");
  await expect(source("n1")).rejects.toThrow("is empty");
  fs.rmSync(dir, { recursive: true });
});
