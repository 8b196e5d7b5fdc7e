/**
 * What the image (npm run image) carries, checked on its unpacked layers with chroot (root; no
 * container engine): every program its own processes run is there and starts (its shared
 * libraries too), the agent's state lock holds with what is there, and the tools the agent runs
 * through nsenter on the host (lvm and its helpers, lsblk, wipefs, blkid) are not, nor PAM or su.
 *
 *   PULUMI_LVM_IMAGE_ARCHIVE=<an oci-archive> npx jest test/image/contents.test.ts
 */
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { BUNDLE_DIR, defaultArchive } from "../../deploy/image/build";
import { MEDIA } from "../../deploy/image/oci";
import { IMAGE_EXECUTABLES } from "../../deploy/image/selection";
import { HOST_COMMAND_PREFIX } from "../../src/components/agent-workload";
import { LOCK_EXECUTABLES } from "../../src/agent/state-lock";

jest.setTimeout(120_000);

const ARCHIVE = process.env.PULUMI_LVM_IMAGE_ARCHIVE ?? defaultArchive();
let root: string;

beforeAll(() => {
  if (process.getuid?.() !== 0) throw new Error("test/image/contents.test.ts needs root (chroot)");
  if (!fs.existsSync(ARCHIVE))
    throw new Error(`no image archive at ${ARCHIVE}: run test/setup.sh (test/image/install.sh builds it)`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "image-contents-"));
  execFileSync("tar", ["-xf", ARCHIVE, "-C", dir]);
  const blob = (digest: string) => path.join(dir, "blobs", ...digest.split(":"));
  const readJson = (file: string) => JSON.parse(fs.readFileSync(file, "utf8"));
  // This machine's platform: the archive's one manifest, or amd64's of its multi-platform index.
  let manifest = readJson(blob(readJson(path.join(dir, "index.json")).manifests[0].digest));
  if (manifest.mediaType === MEDIA.index)
    manifest = readJson(
      blob(
        manifest.manifests.find(
          (m: { platform: { architecture: string } }) => m.platform.architecture === "amd64",
        ).digest,
      ),
    );
  root = path.join(dir, "root");
  fs.mkdirSync(root);
  for (const layer of manifest.layers) execFileSync("tar", ["-xzf", blob(layer.digest), "-C", root]);
});
afterAll(() => {
  if (root) fs.rmSync(path.dirname(root), { recursive: true, force: true });
});

const inImage = (args: string[], env: Record<string, string> = {}) =>
  spawnSync("chroot", [root, ...args], {
    encoding: "utf8",
    env: { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", ...env },
    timeout: 60_000,
  });

describe("the image's contents", () => {
  test("every program its processes run is there and starts: sh, node, nsenter (the command prefix), flock", () => {
    expect(HOST_COMMAND_PREFIX.split(" ")[0]).toBe("nsenter");
    const names = Object.keys(IMAGE_EXECUTABLES).map((p) => path.basename(p));
    expect(names).toEqual(expect.arrayContaining(["nsenter", ...LOCK_EXECUTABLES]));
    for (const program of Object.keys(IMAGE_EXECUTABLES)) {
      const r = inImage(
        program.endsWith("/sh") ? [`/${program}`, "-c", "exit 0"] : [`/${program}`, "--version"],
      );
      expect({ program, status: r.status, stderr: r.stderr }).toEqual({ program, status: 0, stderr: "" });
    }
    expect(inImage(["/usr/local/bin/pulumi-lvm", "--version"]).stdout).toMatch(/^pulumi-lvm /);
  });

  test("the agent's state lock holds there: a second holder is refused", () => {
    const script = `
      const { lockStateDir } = require("/${BUNDLE_DIR}/dist/src/agent/state-lock.js");
      (async () => {
        const release = await lockStateDir("/tmp/lock-test");
        await new Promise((r) => setTimeout(r, 300));
        await lockStateDir("/tmp/lock-test", 1).then(
          () => console.log("a second holder took the lock"),
          (e) => console.log(e.message),
        );
        release();
      })();`;
    const r = inImage(["/usr/bin/node", "-e", script]);
    expect(r.stdout).toContain("is in use by another agent");
  });

  test("what the agent runs on the host through nsenter is not in the image, nor PAM or su", () => {
    const present = (p: string) => fs.existsSync(path.join(root, p));
    const absent = [
      "usr/sbin/lvm",
      "usr/sbin/dmeventd",
      "usr/sbin/thin_check",
      "usr/bin/lsblk",
      "usr/sbin/wipefs",
      "usr/sbin/blkid",
      "usr/bin/su",
      "usr/bin/login",
      "usr/bin/mount",
      "etc/pam.d",
      "usr/lib/x86_64-linux-gnu/libpam.so.0",
      "usr/lib/x86_64-linux-gnu/security",
    ];
    expect(absent.filter(present)).toEqual([]);
    const status = fs.readFileSync(path.join(root, "var/lib/dpkg/status"), "utf8");
    const packages = [...status.matchAll(/^Package: (.*)$/gm)].map((m) => m[1]);
    expect(packages.filter((p) => /^(lvm2|dmeventd|thin-provisioning-tools|libpam)/.test(p!))).toEqual([]);
    expect(packages).toEqual(expect.arrayContaining(["dash", "nodejs", "util-linux"]));
  });
});
