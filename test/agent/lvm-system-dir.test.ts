import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { execFileSync } from "node:child_process";
import { createLvmRunner } from "../../src/agent/lvm-runner";
import { parseConfigLines, writeSyncIoSystemDir } from "../../src/agent/lvm-system-dir";

/**
 * writeSyncIoSystemDir against this machine's lvm2: what lvm itself reads from the copy. Needs lvm2's
 * lvmconfig (configuration only; no device is opened, no root needed).
 */
const lvmconfig = (systemDir: string, ...settings: string[]) =>
  execFileSync("lvmconfig", ["--type", "full", ...settings], {
    env: { PATH: process.env.PATH, LC_ALL: "C", LVM_SUPPRESS_FD_WARNINGS: "1", LVM_SYSTEM_DIR: systemDir },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), "lvm-system-dir-"))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

test("the copy is the host's configuration with use_aio 0 and the host's backup, archive and profile directories", async () => {
  const host = path.join(dir, "host");
  fs.mkdirSync(host);
  fs.writeFileSync(
    path.join(host, "lvm.conf"),
    'global {\n\tuse_aio = 1\n\tumask = 077\n}\nbackup {\n\tretain_days = 7\n\tarchive_dir = "/srv/lvm-archive"\n}\n',
  );
  fs.writeFileSync(path.join(host, "lvmlocal.conf"), "local {\n\thost_id = 7\n}\n");
  const to = path.join(dir, "agent");
  await writeSyncIoSystemDir({ from: host, to, run: createLvmRunner({ lvmSystemDir: host }) });

  const values = lvmconfig(to, "global/use_aio", "global/umask", "backup/retain_days", "local/host_id");
  expect(values).toContain("use_aio=0");
  expect(values).toContain("umask=63"); // 077, as lvmconfig prints it
  expect(values).toContain("retain_days=7");
  expect(values).toContain("host_id=7");
  const dirs = parseConfigLines(
    lvmconfig(to, "backup/backup_dir", "backup/archive_dir", "config/profile_dir"),
  );
  expect(Object.fromEntries(dirs)).toEqual({
    backup_dir: `"${host}/backup"`,
    archive_dir: '"/srv/lvm-archive"',
    profile_dir: `"${host}/profile"`,
  });
});

test("a host without lvm.conf or lvmlocal.conf gets lvm's defaults and use_aio 0", async () => {
  const host = path.join(dir, "empty");
  fs.mkdirSync(host);
  const to = path.join(dir, "agent");
  fs.mkdirSync(to);
  fs.writeFileSync(path.join(to, "lvmlocal.conf"), "stale\n");
  await writeSyncIoSystemDir({ from: host, to, run: createLvmRunner({ lvmSystemDir: host }) });
  expect(lvmconfig(to, "global/use_aio")).toContain("use_aio=0");
  expect(fs.existsSync(path.join(to, "lvmlocal.conf"))).toBe(false);
  expect(Object.fromEntries(parseConfigLines(lvmconfig(to, "backup/backup_dir")))).toEqual({
    backup_dir: `"${host}/backup"`,
  });
});
