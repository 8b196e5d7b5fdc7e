import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { tokenFromFile } from "./token-file";

test("re-reads the file on every call (the kubelet rotates it); errors never hold a token", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-token-"));
  const file = path.join(dir, "token");
  const source = tokenFromFile(file);
  await expect(source()).rejects.toThrow(`cannot read the agent token ${file}`);
  fs.writeFileSync(file, "first-token\n");
  expect(await source()).toBe("first-token");
  fs.writeFileSync(file, "rotated-token");
  expect(await source()).toBe("rotated-token");
  fs.writeFileSync(file, " \n");
  await expect(source()).rejects.toThrow("is empty");
  fs.rmSync(dir, { recursive: true });
});
