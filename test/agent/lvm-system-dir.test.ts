import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { execFileSync, spawnSync } from "node:child_process";
import { createLvmRunner } from "../../src/agent/lvm-runner";
import { parseConfigLines, parseConfigTree, writeSyncIoSystemDir } from "../../src/agent/lvm-system-dir";

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
  // The stale lvmlocal.conf is gone: the copy's holds only the agent's settings (appended there since
  // settings given twice in one file made lvm warn on every command, see below).
  expect(fs.readFileSync(path.join(to, "lvmlocal.conf"), "utf8")).not.toContain("stale");
  expect(Object.fromEntries(parseConfigLines(lvmconfig(to, "backup/backup_dir")))).toEqual({
    backup_dir: `"${host}/backup"`,
  });
});

test("a host that sets use_aio and the backup directories itself: lvm reads the copy without a warning", async () => {
  const host = path.join(dir, "host");
  fs.mkdirSync(host);
  fs.writeFileSync(
    path.join(host, "lvm.conf"),
    'global {\n\tuse_aio = 1\n}\nbackup {\n\tbackup_dir = "/srv/lvm-backup"\n\tarchive_dir = "/srv/lvm-archive"\n}\n',
  );
  fs.writeFileSync(path.join(host, "lvmlocal.conf"), "local {\n\thost_id = 7\n}");
  const to = path.join(dir, "agent");
  await writeSyncIoSystemDir({ from: host, to, run: createLvmRunner({ lvmSystemDir: host }) });
  const r = spawnSync(
    "lvmconfig",
    ["--type", "full", "global/use_aio", "backup/backup_dir", "backup/archive_dir", "local/host_id"],
    {
      env: { PATH: process.env.PATH, LC_ALL: "C", LVM_SUPPRESS_FD_WARNINGS: "1", LVM_SYSTEM_DIR: to },
      encoding: "utf8",
    },
  );
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: "" });
  expect(Object.fromEntries(parseConfigLines(r.stdout))).toEqual({
    backup_dir: '"/srv/lvm-backup"',
    archive_dir: '"/srv/lvm-archive"',
  });
  expect(r.stdout).toContain("use_aio=0");
  expect(r.stdout).toContain("host_id=7");
});

test("with runWithCopy, lvm is asked what it reads from the copy: the host's settings, use_aio 0 and the pinned directories", async () => {
  const host = path.join(dir, "host");
  fs.mkdirSync(host);
  fs.writeFileSync(
    path.join(host, "lvm.conf"),
    'global {\n\tuse_aio = 1\n}\ndevices {\n\tfilter = [ "a|^/dev/sd.*|", "r|.*|" ]\n}\n',
  );
  fs.writeFileSync(path.join(host, "lvmlocal.conf"), "local {\n\thost_id = 7\n}\n");
  const to = path.join(dir, "agent");
  await expect(
    writeSyncIoSystemDir({
      from: host,
      to,
      run: createLvmRunner({ lvmSystemDir: host }),
      runWithCopy: createLvmRunner({ lvmSystemDir: to }),
    }),
  ).resolves.toBeUndefined();
  expect(lvmconfig(to, "global/use_aio")).toContain("use_aio=0");
});

test("a copy lvm does not read as written is refused, naming the settings that differ", async () => {
  const host = path.join(dir, "host");
  fs.mkdirSync(host);
  fs.writeFileSync(path.join(host, "lvm.conf"), "backup {\n\tretain_days = 9\n}\n");
  // lvm, where it runs, finds another file at the copy's path (a stale copy of another configuration).
  const elsewhere = path.join(dir, "elsewhere");
  fs.mkdirSync(elsewhere);
  fs.writeFileSync(
    path.join(elsewhere, "lvm.conf"),
    "global {\n\tuse_aio = 0\n}\nbackup {\n\tretain_days = 1\n}\n",
  );
  await expect(
    writeSyncIoSystemDir({
      from: host,
      to: path.join(dir, "agent"),
      run: createLvmRunner({ lvmSystemDir: host }),
      runWithCopy: createLvmRunner({ lvmSystemDir: elsewhere }),
    }),
  ).rejects.toThrow(
    /reads another configuration from .*agent than the copy of the host's: .*backup\/retain_days is 1, not 9/,
  );
  // ... or none at all (the path does not exist where lvm runs): lvm's own defaults.
  await expect(
    writeSyncIoSystemDir({
      from: host,
      to: path.join(dir, "agent"),
      run: createLvmRunner({ lvmSystemDir: host }),
      runWithCopy: createLvmRunner({ lvmSystemDir: path.join(dir, "missing") }),
    }),
  ).rejects.toThrow(/reads another configuration from .*agent than .*global\/use_aio is unset, not 0$/);
});

test("the copy's devices/ is the host's: lvm lvmdevices through the copy reads the host's devices file", async () => {
  const host = path.join(dir, "host");
  fs.mkdirSync(path.join(host, "devices"), { recursive: true });
  fs.writeFileSync(path.join(host, "lvm.conf"), "devices {\n\tuse_devicesfile = 1\n}\n");
  fs.writeFileSync(path.join(host, "devices", "system.devices"), "");
  const to = path.join(dir, "agent");
  await writeSyncIoSystemDir({ from: host, to, run: createLvmRunner({ lvmSystemDir: host }) });
  expect(fs.readlinkSync(path.join(to, "devices"))).toBe(path.join(host, "devices"));
  // lvm says "Devices file does not exist" (exit 5) when it looks for the file in the copy itself.
  await expect(createLvmRunner({ lvmSystemDir: to })(["lvm", "lvmdevices"])).resolves.toMatchObject({
    stdout: "",
  });
  // written again (an agent restart): the link stays
  await writeSyncIoSystemDir({ from: host, to, run: createLvmRunner({ lvmSystemDir: host }) });
  expect(fs.readlinkSync(path.join(to, "devices"))).toBe(path.join(host, "devices"));
});

test("parseConfigTree: section paths, nested sections, values as lvm printed them", () => {
  expect(
    Object.fromEntries(
      parseConfigTree(
        'global {\n\tuse_aio=0\n\tumask=63\n}\ntags {\n\thosttags=1\n\ttag1 {\n\t\thost_list=["a","b"]\n\t}\n}\nbackup {\n\tbackup_dir="/etc/lvm/backup"\n}\n',
      ),
    ),
  ).toEqual({
    "global/use_aio": "0",
    "global/umask": "63",
    "tags/hosttags": "1",
    "tags/tag1/host_list": '["a","b"]',
    "backup/backup_dir": '"/etc/lvm/backup"',
  });
});
