import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { agentCaFromFile } from "./file-source";

const PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

test("the agents' CA: re-read on every call; a missing or non-PEM file names the file and the flag", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ca-"));
  const file = path.join(dir, "ca.crt");
  const ca = agentCaFromFile(file);
  await expect(ca()).rejects.toThrow(
    `cannot read the agents' CA ${file} (--agent-ca-file; --agent-allow-plain-http to call them without TLS): ENOENT`,
  );
  fs.writeFileSync(file, "not a certificate");
  await expect(ca()).rejects.toThrow(`the agents' CA ${file} (--agent-ca-file) holds no PEM certificate`);
  fs.writeFileSync(file, PEM);
  expect(await ca()).toBe(PEM);
  fs.writeFileSync(file, PEM.replace("MIIB", "MIIC"));
  expect(await ca()).toContain("MIIC");
  fs.rmSync(dir, { recursive: true });
});
