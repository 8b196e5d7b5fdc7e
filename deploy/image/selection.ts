/**
 * What of the locked Debian packages the image unpacks: only what its own processes run. The agent
 * runs lvm, lsblk, wipefs and blkid through `nsenter --target 1` in the host's namespaces
 * (LvmSystem's --command-prefix), so the image needs none of them: it runs `pulumi-lvm` (dash and
 * node), nsenter, and the state lock's flock and sh (src/agent/state-lock.ts). util-linux brings
 * nsenter and flock, and with them su, login, mount and PAM: of util-linux the image takes those
 * two programs, and of its dependencies only what they link.
 */

/** Programs the image's own processes execute, and the package each comes from. */
export const IMAGE_EXECUTABLES: Readonly<Record<string, string>> = {
  "usr/bin/sh": "dash", // the pulumi-lvm wrapper; the state lock's holder
  "usr/bin/node": "nodejs", // pulumi-lvm agent | operator
  "usr/bin/nsenter": "util-linux", // the agent's --command-prefix: lvm & co. in the host's namespaces
  "usr/bin/flock": "util-linux", // the agent's state lock
};

/**
 * Packages taken in part: the files kept (besides their copyright), and the packages those files
 * need instead of the package's own dependencies (the shared libraries of `readelf -d`: nsenter
 * links libselinux.so.1 and libc.so.6, flock libc.so.6).
 */
export const PARTIAL_PACKAGES: Readonly<
  Record<string, { files: readonly string[]; needs: readonly string[] }>
> = {
  "util-linux": { files: ["usr/bin/nsenter", "usr/bin/flock"], needs: ["libc6", "libselinux1"] },
};

/**
 * The names a Depends or Pre-Depends field asks for among the packages `have` holds: of each
 * group of alternatives ("a | b"), the first one held; version constraints and architecture
 * qualifiers dropped. A group none of whose alternatives is held is left out.
 */
export function dependencyNames(field: string, have: (name: string) => boolean): string[] {
  const names: string[] = [];
  for (const group of field.split(",")) {
    const held = group
      .split("|")
      .map((alternative) => alternative.trim().split(/[\s(:]/)[0]!)
      .find((name) => name && have(name));
    if (held) names.push(held);
  }
  return names;
}

/**
 * The packages to unpack: the closure of `roots` over each package's dependencies (`depends`: a
 * package's Pre-Depends and Depends), a partial package's dependencies being its `needs`.
 */
export function unpackedPackages(
  roots: readonly string[],
  depends: ReadonlyMap<string, string>,
  partial: typeof PARTIAL_PACKAGES = PARTIAL_PACKAGES,
): Set<string> {
  const have = (name: string) => depends.has(name);
  const chosen = new Set<string>();
  const pending = [...roots];
  while (pending.length) {
    const name = pending.pop()!;
    if (chosen.has(name)) continue;
    if (!have(name)) throw new Error(`Debian package ${name} is needed but not in the lock`);
    chosen.add(name);
    pending.push(...(partial[name]?.needs ?? dependencyNames(depends.get(name)!, have)));
  }
  return chosen;
}

/** Whether a path of package `name` is unpacked: all of a whole package; of a partial one its files, their directories and its copyright. */
export function keepsPath(
  name: string,
  path: string,
  partial: typeof PARTIAL_PACKAGES = PARTIAL_PACKAGES,
): boolean {
  const part = partial[name];
  if (!part) return true;
  const kept = [...part.files, `usr/share/doc/${name}/copyright`];
  const bare = path.replace(/^\.\//, "").replace(/\/$/, "");
  return kept.some((file) => file === bare || file.startsWith(`${bare}/`));
}
