import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { explicitConnection, inClusterConnection, rereadingFile } from "./connection";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "operator-conn-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("rereadingFile", () => {
  test("returns the new content after the file is replaced (token rotation)", () => {
    const file = path.join(dir, "token");
    fs.writeFileSync(file, "first\n");
    const read = rereadingFile(file);
    expect(read()).toBe("first");
    const next = path.join(dir, "token.new");
    fs.writeFileSync(next, "second-token\n");
    fs.renameSync(next, file); // as kubelet does: a new inode
    expect(read()).toBe("second-token");
  });

  test("names the file when it cannot be read", () => {
    expect(() => rereadingFile(path.join(dir, "missing"))()).toThrow(/cannot read .*missing/);
  });
});

describe("inClusterConnection", () => {
  test("uses KUBERNETES_SERVICE_HOST/PORT and the mounted token and CA", () => {
    fs.writeFileSync(path.join(dir, "token"), "tok");
    fs.writeFileSync(path.join(dir, "ca.crt"), "PEM");
    const c = inClusterConnection(
      { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "6443" },
      dir,
    );
    expect(c.server).toBe("https://[fd00::1]:6443");
    expect(c.token()).toBe("tok");
    expect(c.ca()).toBe("PEM");
  });

  test("says what is missing", () => {
    expect(() => inClusterConnection({}, dir)).toThrow(/KUBERNETES_SERVICE_HOST/);
    expect(() => inClusterConnection({ KUBERNETES_SERVICE_HOST: "10.0.0.1" }, dir)).toThrow(/token/);
  });
});

test("explicitConnection without a CA uses the system CAs", () => {
  fs.writeFileSync(path.join(dir, "t"), "abc\n");
  const c = explicitConnection({ server: "https://127.0.0.1:6443", tokenFile: path.join(dir, "t") });
  expect(c.token()).toBe("abc");
  expect(c.ca()).toBeUndefined();
});
