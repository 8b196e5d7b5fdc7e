/**
 * The premise of discovery's skipped blkid (src/inventory/discover.ts, withBlkid): on a whole device
 * where `wipefs --no-act` finds nothing, `blkid -p` finds nothing either (exit 2), so discovery does not
 * ask it. Checked with this machine's real util-linux and mkfs tools on image files (libblkid probes a
 * file as it probes a device): blank, random bytes, each kind of signature, and each kind wiped again.
 * Where wipefs does list something, blkid is asked, so only the empty case matters here.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { promisify } from "node:util";
import { blkidArgv, BLKID_NOTHING_FOUND } from "../../src/inventory/blkid";
import { wipefsArgv, wipefsEntries } from "../../src/inventory/wipefs";

const exec = promisify(execFile);
const env = { ...process.env, LC_ALL: "C" };
const dir = `/var/tmp/blkid-premise-${process.pid}`;
const MiB = 1024 ** 2;

async function run(argv: readonly string[]): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await exec(argv[0]!, argv.slice(1), { env, timeout: 60_000 });
    return { code: 0, stdout };
  } catch (err) {
    const e = err as { code?: unknown; stdout?: string };
    if (typeof e.code !== "number") throw err;
    return { code: e.code, stdout: e.stdout ?? "" };
  }
}

/** An image file of `size` bytes, made by `make` (given its path). */
async function image(name: string, size: number, make: (file: string) => Promise<unknown> | void) {
  const file = `${dir}/${name}.img`;
  writeFileSync(file, "");
  truncateSync(file, size);
  await make(file);
  return file;
}

const images: Array<[string, (file: string) => Promise<unknown> | void]> = [
  ["blank", () => undefined],
  ["random", (f) => writeFileSync(f, randomBytes(4 * MiB))],
  ["ext4", (f) => run(["mkfs.ext4", "-q", "-F", f])],
  ["swap", (f) => run(["mkswap", f])],
  ["dos", (f) => exec("sh", ["-c", `echo 'label: dos' | sfdisk --quiet ${f}`])],
  ["gpt", (f) => exec("sh", ["-c", `echo 'label: gpt' | sfdisk --quiet ${f}`])],
  ["ext4-wiped", async (f) => (await run(["mkfs.ext4", "-q", "-F", f]), run(["wipefs", "--all", "-q", f]))],
  ["swap-wiped", async (f) => (await run(["mkswap", f]), run(["wipefs", "--all", "-q", f]))],
  [
    "gpt-wiped",
    async (f) => {
      await exec("sh", ["-c", `echo 'label: gpt' | sfdisk --quiet ${f}`]);
      await run(["wipefs", "--all", "-q", f]);
    },
  ],
];

beforeAll(() => mkdirSync(dir, { recursive: true }));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test.each(images)(
  "%s: blkid -p finds something only where wipefs --no-act does",
  async (name, make) => {
    const file = await image(name, 64 * MiB, make);
    const wipefs = await run(wipefsArgv(file));
    expect(wipefs.code).toBe(0);
    const entries = wipefsEntries(wipefs.stdout);
    const blkid = await run(blkidArgv(file));
    if (entries.length === 0) expect(blkid).toEqual({ code: BLKID_NOTHING_FOUND, stdout: "" });
    else expect(blkid.code).not.toBe(BLKID_NOTHING_FOUND);
    // The cases cover both sides: signatures present, and none (blank, random, wiped filesystems).
    if (["blank", "random", "ext4-wiped", "swap-wiped"].includes(name)) expect(entries).toEqual([]);
    if (["ext4", "swap", "dos", "gpt"].includes(name)) expect(entries).not.toEqual([]);
  },
  60_000,
);
