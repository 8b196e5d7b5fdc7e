import { readdirSync, readFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { agentFlags, HOST_COMMAND_PREFIX } from "../../src/components/agent-workload";
import { planSystem } from "../../src/components/system-plan";
import { parseAgentConfig } from "../../src/agent/config";
import { LOCK_EXECUTABLES } from "../../src/agent/state-lock";
import { ALLOWED_TOOLS } from "../../src/agent/lvm-command";
import { ROOT_PACKAGES } from "./debian";
import { dependencyNames, IMAGE_EXECUTABLES, keepsPath, unpackedPackages } from "./selection";

const SRC = join(__dirname, "..", "..", "src");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sources(join(dir, e.name))
      : e.name.endsWith(".ts") && !e.name.endsWith(".test.ts")
        ? [join(dir, e.name)]
        : [],
  );
}

/**
 * Every source file that starts a process, and what it starts inside the image. A new one fails
 * this test until it is added here and what it runs is in the image (IMAGE_EXECUTABLES) or goes
 * through the command prefix.
 */
const PROCESS_STARTERS: Record<string, string> = {
  "agent/state-lock.ts": "LOCK_EXECUTABLES (flock, sh)",
  "agent/command-process.ts": "the runner's argv: the command prefix (nsenter) first",
  "agent/lvm-shell.ts": "the command prefix (nsenter), then lvm",
  // kubeconfig exec plugins: Pulumi's side only; the operator in the image uses its service account
  "kube/exec-credential.ts": "a kubeconfig's exec plugin (never in the image)",
};

describe("what the image runs", () => {
  test("every file that starts a process is one reviewed here", () => {
    const starters = sources(SRC)
      .filter((f) =>
        /from "node:child_process"|require\("(node:)?child_process"\)/.test(readFileSync(f, "utf8")),
      )
      .map((f) => relative(SRC, f))
      .sort();
    expect(starters).toEqual(Object.keys(PROCESS_STARTERS).sort());
  });

  test("the state lock's programs and the command prefix's are in the image; lvm and the probes are not, they go through nsenter", () => {
    const inImage = Object.keys(IMAGE_EXECUTABLES).map((p) => basename(p));
    expect(inImage).toEqual(expect.arrayContaining([...LOCK_EXECUTABLES]));
    // as LvmSystem starts the agent: every lvm/probe command is prefixed with nsenter
    const plan = planSystem("lvm", {});
    const config = parseAgentConfig([...agentFlags(plan, {}), "--node", "n1"], {
      KUBERNETES_SERVICE_HOST: "10.0.0.1",
    });
    expect(config.commandPrefix).toEqual(HOST_COMMAND_PREFIX.split(" "));
    expect(inImage).toContain(config.commandPrefix[0]);
    expect(ALLOWED_TOOLS.filter((tool) => inImage.includes(tool))).toEqual([]);
    expect(ROOT_PACKAGES).not.toEqual(expect.arrayContaining(["lvm2"]));
    expect(ROOT_PACKAGES.filter((p) => /lvm2|thin-provisioning-tools/.test(p))).toEqual([]);
  });
});

describe("dependencyNames and unpackedPackages", () => {
  const have = (n: string) => ["libc6", "debconf", "libselinux1", "libpcre2-8-0"].includes(n);

  test("the first held alternative of each group; versions and qualifiers dropped; groups none of which is held left out", () => {
    expect(
      dependencyNames(
        "libc6 (>= 2.34), cdebconf | debconf (>= 0.5) | debconf-2.0, libfoo, libselinux1:any",
        have,
      ),
    ).toEqual(["libc6", "debconf", "libselinux1"]);
    expect(dependencyNames("", have)).toEqual([]);
  });

  test("a partial package brings what its kept files link, not its own dependencies", () => {
    const depends = new Map([
      ["util-linux", "libpam0g, libc6 (>= 2.41), libselinux1"],
      ["libpam0g", "libc6, debconf"],
      ["libc6", ""],
      ["debconf", ""],
      ["libselinux1", "libc6, libpcre2-8-0"],
      ["libpcre2-8-0", "libc6"],
    ]);
    expect([...unpackedPackages(["util-linux"], depends, {})].sort()).toEqual([
      "debconf",
      "libc6",
      "libpam0g",
      "libpcre2-8-0",
      "libselinux1",
      "util-linux",
    ]);
    const partial = { "util-linux": { files: ["usr/bin/nsenter"], needs: ["libc6", "libselinux1"] } };
    expect([...unpackedPackages(["util-linux"], depends, partial)].sort()).toEqual([
      "libc6",
      "libpcre2-8-0",
      "libselinux1",
      "util-linux",
    ]);
    expect(() => unpackedPackages(["nodejs"], depends, partial)).toThrow(
      "Debian package nodejs is needed but not in the lock",
    );
    expect(
      ["usr", "usr/bin", "usr/bin/nsenter", "usr/share/doc/util-linux/copyright"].every((p) =>
        keepsPath("util-linux", p, partial),
      ),
    ).toBe(true);
    expect(
      ["usr/bin/su", "etc/pam.d", "usr/sbin", "usr/share/doc/util-linux/NEWS"].some((p) =>
        keepsPath("util-linux", p, partial),
      ),
    ).toBe(false);
    expect(keepsPath("libc6", "usr/lib/x86_64-linux-gnu/libc.so.6", partial)).toBe(true);
  });
});
