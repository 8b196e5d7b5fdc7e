/**
 * The image (npm run image) under a real OCI runtime (podman + runc): its CLI, the agent serving with
 * a static token, and the agent in a privileged container in the host's PID namespace, running this
 * machine's lvm through nsenter as LvmSystem runs it, planning and applying on a loop device.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import { freePort } from "../net";
import {
  membersOf,
  request,
  requireHostTier,
  Scratch,
  thickSpec,
  vgs,
  writeTokenFile,
} from "../agent/harness";
import { HOST_COMMAND_PREFIX } from "../../src/components/agent-workload";
import { PACKAGE_VERSION } from "../../src/version";
import { ARCHIVE, IMAGE, Podman, requireImageTier, uidsOf } from "./podman";

jest.setTimeout(300_000);

let podman: Podman;
let scratch: Scratch;
beforeAll(() => {
  requireImageTier();
  requireHostTier();
  podman = new Podman("agent");
  scratch = new Scratch("image");
  expect(podman.load()).toBe(`Loaded image: ${IMAGE}`);
});
afterAll(() => {
  podman?.cleanup();
  scratch?.cleanup();
});

/** Polls the agent until it answers /healthz, failing with its logs. */
async function healthy(id: string, url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ok = await request(url, "GET", "/healthz", { timeoutMs: 2000 }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`agent not healthy within 60 s:\n${podman.logs(id)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * LvmSystem's prefix (nsenter into PID 1's namespaces), aimed at this test's own process instead:
 * in this sandbox PID 1 is the machine's init, whose namespaces not even root on the host may enter
 * (`nsenter --target 1` fails with EPERM there, with or without a container), while this process is
 * root in the host's namespaces as PID 1 is on a node. Same flags, same mechanism; only the target.
 */
function hostCommandPrefix(): string {
  const prefix = HOST_COMMAND_PREFIX.replace("--target 1 ", `--target ${process.pid} `);
  if (prefix === HOST_COMMAND_PREFIX) throw new Error(`HOST_COMMAND_PREFIX changed: ${HOST_COMMAND_PREFIX}`);
  return prefix;
}

describe("the pulumi-lvm image", () => {
  it("prints its version, as the non-root user of its config", () => {
    const version = podman.runImage([], ["--version"]);
    expect(version).toMatchObject({ status: 0, stdout: `pulumi-lvm ${PACKAGE_VERSION}\n` });
    const ids = podman.runImage(
      ["--entrypoint", "node"],
      ["-e", "console.log(process.getuid(), process.getgid())"],
    );
    expect(ids.stdout).toBe("65532 65532\n");
    const [inspected] = JSON.parse(podman.run(["image", "inspect", IMAGE]).stdout);
    expect(inspected.Config.User).toBe("65532:65532");
    expect(inspected.Config.Labels).toMatchObject({
      "org.opencontainers.image.version": PACKAGE_VERSION,
      "org.opencontainers.image.licenses": "Apache-2.0",
      "org.opencontainers.image.revision": expect.stringMatching(/^[0-9a-f]{40}(-dirty)?$/),
      "io.pulumi-lvm.debian.release": expect.stringMatching(/^trixie \(Debian 13\.\d+\)/),
    });
  });

  it("is one manifest digest for podman and skopeo (oci-archive)", () => {
    const skopeo = JSON.parse(
      execFileSync("skopeo", ["inspect", `oci-archive:${ARCHIVE}`], { encoding: "utf8" }),
    );
    const digest = podman.run(["image", "inspect", "--format", "{{.Digest}}", IMAGE]).stdout.trim();
    expect(skopeo.Digest).toBe(digest);
    expect(skopeo.Labels["org.opencontainers.image.version"]).toBe(PACKAGE_VERSION);
  });

  it("has what its processes run (sh, node, nsenter, flock), not what the agent runs on the host through nsenter, and no setuid files", () => {
    const r = podman.runImage(
      ["--entrypoint", "sh"],
      [
        "-c",
        "for t in sh node nsenter flock; do command -v $t >/dev/null || echo missing $t; done; " +
          "for t in lvm thin_check lsblk wipefs blkid su; do command -v $t >/dev/null && echo present $t; done; true",
      ],
    );
    expect(r).toMatchObject({ status: 0, stdout: "" });
    const setuid = podman.runImage(
      ["--user", "0", "--entrypoint", "node"],
      [
        "-e",
        `const fs=require("fs"),p=require("path");const out=[];(function w(d){for(const n of fs.readdirSync(d)){const f=p.join(d,n);const s=fs.lstatSync(f);if(s.isDirectory()&&!["/proc","/sys","/dev"].includes(f))w(f);else if(s.isFile()&&(s.mode&0o6000))out.push(f)}})("/");console.log(JSON.stringify(out))`,
      ],
    );
    expect(JSON.parse(setuid.stdout)).toEqual([]);
  });

  it("serves /healthz and checks the static token (the agent as LvmSystem runs it: root)", async () => {
    const port = await freePort();
    writeTokenFile(scratch.path("tokens"), { op: { user: "operator", node: "img-node" } });
    const id = podman.start(
      ["--user", "0", "--volume", `${scratch.dir}:${scratch.dir}:ro`],
      [
        "agent",
        "--node",
        "img-node",
        "--listen",
        `127.0.0.1:${port}`,
        "--token-file",
        scratch.path("tokens"),
        "--state-dir",
        "/tmp/state",
        "--lvmd-config",
        "/tmp/lvmd.yaml",
      ],
    );
    const url = `http://127.0.0.1:${port}`;
    await healthy(id, url);
    expect((await request(url, "GET", "/v1/inventory")).status).toBe(401);
    expect((await request(url, "GET", "/v1/inventory", { token: "not-the-token" })).status).toBe(401);
    expect(uidsOf(podman.pid(id))).toBe("0 0");
    podman.run(["stop", "--time", "10", id]);
    expect(podman.run(["inspect", "--format", "{{.State.ExitCode}}", id]).stdout.trim()).toBe("0");
  });

  it("privileged, as LvmSystem runs it (host PID namespace, lvm through nsenter): sees a loop device, plans it and applies the plan; this machine's lvm sees the result", async () => {
    const loop = scratch.loop();
    const vg = `img-${randomBytes(3).toString("hex")}`;
    const port = await freePort();
    const token = writeTokenFile(scratch.path("tokens2"), { op: { user: "operator", node: "img-node" } }).op!;
    fs.mkdirSync(scratch.path("state"), { recursive: true });
    const id = podman.start(
      [
        "--user",
        "0",
        "--privileged",
        "--pid",
        "host",
        "--volume",
        "/dev:/dev",
        "--volume",
        `${scratch.dir}:${scratch.dir}`,
      ],
      [
        "agent",
        "--command-prefix",
        hostCommandPrefix(),
        "--node",
        "img-node",
        "--listen",
        `127.0.0.1:${port}`,
        "--devices",
        loop,
        "--token-file",
        scratch.path("tokens2"),
        "--state-dir",
        scratch.path("state"),
        "--lvmd-config",
        scratch.path("lvmd.yaml"),
        "--command-log",
        scratch.path("commands.jsonl"),
      ],
    );
    const url = `http://127.0.0.1:${port}`;
    await healthy(id, url);

    const inventory = await request(url, "GET", "/v1/inventory", { token });
    expect(inventory.status).toBe(200);
    expect(inventory.json.devices).toEqual([expect.objectContaining({ path: loop })]);

    const spec = thickSpec(vg, [loop]);
    const plan = await request(url, "POST", "/v1/plan", { token, body: { spec } });
    expect(plan.status).toBe(200);
    expect(plan.json.actions.map((a: { op: string }) => a.op)).toEqual([
      "pvcreate",
      "vgcreate",
      "pvchange",
      "write-lvmd-config",
    ]);
    expect(vgs([loop])).toEqual([]); // a plan writes nothing

    const applied = await request(url, "POST", "/v1/apply", {
      token,
      body: { spec, planHash: plan.json.hash },
    });
    if (applied.status !== 200)
      throw new Error(`apply: HTTP ${applied.status}: ${applied.text}\n${podman.logs(id)}`);
    expect(membersOf([loop], vg)).toEqual([loop]);
    expect(fs.readFileSync(scratch.path("lvmd.yaml"), "utf8")).toContain(`volume-group: "${vg}"`);
    podman.run(["stop", "--time", "10", id]);
  });
});
