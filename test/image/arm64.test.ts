/**
 * The image's linux/arm64 half, run on this amd64 machine under qemu-user: the archive is a
 * multi-platform index whose arm64 manifest has Debian's arm64 packages and the shared package
 * layer; unpacked (chroot, no container engine), its arm64 node prints the CLI's version and its
 * agent answers an inventory of a loop device, running this machine's lsblk and lvm through nsenter
 * as LvmSystem runs it. Every arm64 program runs through binfmt_misc's qemu-aarch64 entry
 * (test/image/install.sh registers qemu-user-static's, with the F flag so it works in a chroot).
 *
 *   PULUMI_LVM_IMAGE_ARCHIVE=<an oci-archive> npx jest test/image/arm64.test.ts
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { BUNDLE_DIR, defaultArchive, sbomPath } from "../../deploy/image/build";
import { MEDIA } from "../../deploy/image/oci";
import { HOST_COMMAND_PREFIX } from "../../src/components/agent-workload";
import { PACKAGE_VERSION } from "../../src/version";
import { request, requireHostTier, Scratch, writeTokenFile } from "../agent/harness";
import { freePort } from "../net";

jest.setTimeout(300_000);

const ARCHIVE = process.env.PULUMI_LVM_IMAGE_ARCHIVE ?? defaultArchive();
const BINFMT = "/proc/sys/fs/binfmt_misc/qemu-aarch64";
let dir: string;
let root: string;
let index: { manifests: Array<{ digest: string; platform: { architecture: string; os: string } }> };
const manifests = new Map<string, { config: { digest: string }; layers: Array<{ digest: string }> }>();
const blob = (digest: string) => path.join(dir, "blobs", ...digest.split(":"));
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, "utf8"));

beforeAll(() => {
  if (process.getuid?.() !== 0) throw new Error("test/image/arm64.test.ts needs root (chroot, loop devices)");
  const binfmt = fs.existsSync(BINFMT) ? fs.readFileSync(BINFMT, "utf8") : "";
  if (!/^enabled$/m.test(binfmt) || !/^flags: .*F/m.test(binfmt))
    throw new Error(
      `no qemu-aarch64 binfmt_misc entry with the F flag at ${BINFMT}: run test/image/install.sh (qemu-user-static)`,
    );
  if (!fs.existsSync(ARCHIVE))
    throw new Error(`no image archive at ${ARCHIVE}: run test/setup.sh (test/image/install.sh builds it)`);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "image-arm64-"));
  spawnSync("tar", ["-xf", ARCHIVE, "-C", dir]);
  const top = readJson(path.join(dir, "index.json"));
  expect(top.manifests).toEqual([
    expect.objectContaining({
      mediaType: MEDIA.index,
      annotations: expect.objectContaining({ "io.containerd.image.name": expect.any(String) }),
    }),
  ]);
  index = readJson(blob(top.manifests[0].digest));
  for (const m of index.manifests) manifests.set(m.platform.architecture, readJson(blob(m.digest)));
  root = path.join(dir, "root");
  fs.mkdirSync(root);
  for (const layer of manifests.get("arm64")?.layers ?? [])
    spawnSync("tar", ["-xzf", blob(layer.digest), "-C", root]);
});
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** A command in the unpacked arm64 image: chroot, so its programs start through binfmt's qemu. */
const inImage = (args: string[]) =>
  spawnSync("chroot", [root, ...args], {
    encoding: "utf8",
    env: { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" },
    timeout: 120_000,
  });

describe("the image for linux/arm64", () => {
  test("the archive is one image index of linux/amd64 and linux/arm64, sharing the package layer", () => {
    expect(index.manifests.map((m) => m.platform)).toEqual([
      { architecture: "amd64", os: "linux" },
      { architecture: "arm64", os: "linux" },
    ]);
    for (const [arch, manifest] of manifests)
      expect(readJson(blob(manifest.config.digest))).toMatchObject({ architecture: arch, os: "linux" });
    const [amdDebian, amdPackage] = manifests.get("amd64")!.layers;
    const [armDebian, armPackage] = manifests.get("arm64")!.layers;
    expect(armPackage!.digest).toBe(amdPackage!.digest);
    expect(armDebian!.digest).not.toBe(amdDebian!.digest);
    // ELF e_machine 183 (EM_AARCH64): Debian's arm64 node, not the host's.
    expect(fs.readFileSync(path.join(root, "usr/bin/node")).readUInt16LE(18)).toBe(183);
    const status = fs.readFileSync(path.join(root, "var/lib/dpkg/status"), "utf8");
    const archs = new Set([...status.matchAll(/^Architecture: (.*)$/gm)].map((m) => m[1]));
    expect([...archs].sort()).toEqual(["all", "arm64"]);
  });

  test("under qemu-user: the CLI prints its version", () => {
    expect(inImage(["/usr/local/bin/pulumi-lvm", "--version"])).toMatchObject({
      status: 0,
      stdout: `pulumi-lvm ${PACKAGE_VERSION}\n`,
    });
  });

  test("under qemu-user: the agent answers an inventory of a loop device, lsblk and lvm run on the host through nsenter", async () => {
    requireHostTier();
    const scratch = new Scratch("arm64");
    let agent: ChildProcess | undefined;
    let output = "";
    try {
      const loop = scratch.loop();
      const port = await freePort();
      const token = writeTokenFile(scratch.path("tokens"), {
        op: { user: "operator", node: "arm-node" },
      }).op!;
      // LvmSystem's prefix aimed at this process, whose namespaces are the host's (agent.test.ts says why).
      const prefix = HOST_COMMAND_PREFIX.replace("--target 1 ", `--target ${process.pid} `);
      expect(prefix).not.toBe(HOST_COMMAND_PREFIX);
      // The chroot gets /proc, /sys, /dev and the scratch directory in a mount namespace of its own,
      // gone with it: nothing is mounted in this machine's.
      const mounts = ["proc", "sys", "dev"].map((d) => `mount --rbind /${d} ${root}/${d}`);
      fs.mkdirSync(path.join(root, scratch.dir), { recursive: true });
      mounts.push(`mount --bind ${scratch.dir} ${root}${scratch.dir}`);
      const agentArgs = [
        "agent",
        "--command-prefix",
        prefix,
        "--node",
        "arm-node",
        "--listen",
        `127.0.0.1:${port}`,
        "--devices",
        loop,
        "--token-file",
        scratch.path("tokens"),
        "--state-dir",
        scratch.path("state"),
        "--lvmd-config",
        scratch.path("lvmd.yaml"),
      ];
      for (const d of ["proc", "sys", "dev"]) fs.mkdirSync(path.join(root, d), { recursive: true });
      agent = spawn(
        "unshare",
        [
          "--mount",
          "--propagation",
          "private",
          "sh",
          "-c",
          `${mounts.join(" && ")} && exec chroot ${root} /usr/local/bin/pulumi-lvm "$@"`,
          "sh",
          ...agentArgs,
        ],
        { stdio: ["ignore", "pipe", "pipe"], env: { PATH: "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" } },
      );
      agent.stdout!.on("data", (c) => (output += c));
      agent.stderr!.on("data", (c) => (output += c));
      const url = `http://127.0.0.1:${port}`;
      const deadline = Date.now() + 120_000;
      for (;;) {
        const ok = await request(url, "GET", "/healthz", { timeoutMs: 2000 }).then(
          (r) => r.status === 200,
          () => false,
        );
        if (ok) break;
        if (agent.exitCode !== null || Date.now() > deadline)
          throw new Error(`the arm64 agent did not answer /healthz (exit ${agent.exitCode}):\n${output}`);
        await new Promise((r) => setTimeout(r, 500));
      }
      // The agent's process (unshare, sh, chroot and the wrapper each exec the next) is node for
      // arm64, started by the kernel through binfmt_misc's interpreter: qemu-user.
      expect(fs.readlinkSync(`/proc/${agent.pid}/exe`)).toMatch(/qemu/);
      const inventory = await request(url, "GET", "/v1/inventory", { token });
      if (inventory.status !== 200)
        throw new Error(`inventory: HTTP ${inventory.status}: ${inventory.text}\n${output}`);
      expect(inventory.json.devices).toEqual([expect.objectContaining({ path: loop })]);
    } finally {
      agent?.kill("SIGTERM");
      if (agent && agent.exitCode === null) await new Promise((r) => agent!.once("exit", r));
      scratch.cleanup();
    }
  });

  test("an SPDX 2.3 SBOM next to the archive for each architecture: its Debian packages and the npm closure", () => {
    const status = fs.readFileSync(path.join(root, "var/lib/dpkg/status"), "utf8");
    const debs = [...status.matchAll(/^Package: (.*)\n(?:[^\n]+\n)*?Version: (.*)$/gm)].map(
      (m) => `${m[1]}@${m[2]}`,
    );
    for (const arch of ["amd64", "arm64"]) {
      const sbom = readJson(sbomPath(ARCHIVE, arch as "amd64"));
      expect(sbom).toMatchObject({
        spdxVersion: "SPDX-2.3",
        dataLicense: "CC0-1.0",
        SPDXID: "SPDXRef-DOCUMENT",
      });
      const image = sbom.packages.find(
        (p: { primaryPackagePurpose?: string }) => p.primaryPackagePurpose === "CONTAINER",
      );
      const digest = index.manifests.find((m) => m.platform.architecture === arch)!.digest;
      expect(image.checksums).toEqual([{ algorithm: "SHA256", checksumValue: digest.slice(7) }]);
      const purls: string[] = sbom.packages.map(
        (p: { externalRefs: Array<{ referenceLocator: string }> }) => p.externalRefs[0]!.referenceLocator,
      );
      expect(
        purls.filter((p) => p.startsWith("pkg:deb/")).every((p) => new RegExp(`arch=(${arch}|all)&`).test(p)),
      ).toBe(true);
      if (arch === "arm64") {
        const listed = sbom.packages
          .filter((p: { externalRefs: Array<{ referenceLocator: string }> }) =>
            p.externalRefs[0]!.referenceLocator.startsWith("pkg:deb/"),
          )
          .map((p: { name: string; versionInfo: string }) => `${p.name}@${p.versionInfo}`);
        expect(listed.sort()).toEqual(debs.sort());
      }
      const npm = fs
        .readdirSync(path.join(root, BUNDLE_DIR, "node_modules"))
        .filter((n) => !n.startsWith("."));
      for (const name of ["pulumi-lvm", ...npm.filter((n) => !n.startsWith("@"))])
        expect(purls).toContainEqual(expect.stringMatching(new RegExp(`^pkg:npm/${name}@`)));
      const nodejs = sbom.packages.find((p: { name: string }) => p.name === "nodejs");
      expect(nodejs.externalRefs[0].referenceLocator).toMatch(
        new RegExp(`^pkg:deb/debian/nodejs@20\\.[^?]+\\?arch=${arch}&distro=debian-13$`),
      );
      expect(sbom.relationships).toHaveLength(sbom.packages.length); // DESCRIBES + a CONTAINS each
    }
  });
});
