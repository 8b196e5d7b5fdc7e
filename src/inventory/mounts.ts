/**
 * What is mounted and what is swap, from /proc/self/mountinfo (or /proc/mounts) and /proc/swaps.
 * The kernel escapes space, tab, newline and backslash in paths as octal: "/mnt/a\040b" is "/mnt/a b".
 */
export interface MountEntry {
  /** The mount source as written: "/dev/loop3", "/dev/mapper/vg-lv", "overlay". */
  readonly source: string;
  readonly mountpoint: string;
  readonly fstype: string;
  /** "major:minor" of the mounted device (mountinfo only). */
  readonly majMin?: string;
}

/** Parses mountinfo or /proc/mounts text (recognised per line). Throws naming the line on anything else. */
export function parseMounts(text: string): MountEntry[] {
  return lines(text).map(({ fields, number }) => {
    const info = mountinfoFields(fields);
    if (info) return info;
    if (fields.length === 6) {
      const [source, mountpoint, fstype] = fields as [string, string, string];
      return { source: unescapeOctal(source), mountpoint: unescapeOctal(mountpoint), fstype };
    }
    throw new Error(
      `line ${number}: expected a mountinfo or /proc/mounts line (got ${fields.length} fields)`,
    );
  });
}

/** The swap areas listed in /proc/swaps (paths, unescaped). */
export function parseSwaps(text: string): string[] {
  return lines(text)
    .filter(({ fields }) => fields[0] !== "Filename")
    .map(({ fields, number }) => {
      if (fields.length < 5)
        throw new Error(`line ${number}: expected "Filename Type Size Used Priority" columns`);
      return unescapeOctal(fields[0]!);
    });
}

/**
 * Only the mountinfo/mounts lines for the given devices (by "major:minor" or by source path), for
 * discovery restricted to some devices: the rest of the host's mounts are none of its business.
 */
export function mountLinesFor(
  text: string,
  majMins: ReadonlySet<string>,
  paths: ReadonlySet<string>,
): string {
  return keep(text, (fields) => {
    const m = mountinfoFields(fields);
    if (m) return (m.majMin !== undefined && majMins.has(m.majMin)) || paths.has(m.source);
    return fields.length === 6 && paths.has(unescapeOctal(fields[0]!));
  });
}

/** The last mountinfo or /proc/mounts line mounted at `/` (the one in effect), or undefined. */
export function rootMountLine(text: string): string | undefined {
  const lines = text.split("\n").filter((line) => {
    const fields = line.trim().split(/\s+/);
    const m = mountinfoFields(fields);
    return m ? m.mountpoint === "/" : fields.length === 6 && fields[1] === "/";
  });
  return lines.at(-1)?.trim();
}

/** /proc/swaps with its header and only the entries for the given device paths. */
export function swapLinesFor(text: string, paths: ReadonlySet<string>): string {
  return keep(text, (fields) => fields[0] === "Filename" || paths.has(unescapeOctal(fields[0]!)));
}

/** "\040" → " ", "\011" → tab, "\012" → newline, "\134" → backslash. */
export function unescapeOctal(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/** mountinfo: `id parent maj:min root mountpoint options [optional...] - fstype source superoptions` */
function mountinfoFields(fields: readonly string[]): MountEntry | undefined {
  const dash = fields.indexOf("-", 6);
  if (dash < 0 || fields.length < dash + 3 || !/^\d+:\d+$/.test(fields[2]!)) return undefined;
  return {
    source: unescapeOctal(fields[dash + 2]!),
    mountpoint: unescapeOctal(fields[4]!),
    fstype: fields[dash + 1]!,
    majMin: fields[2]!,
  };
}

function lines(text: string): { fields: string[]; number: number }[] {
  return text
    .split("\n")
    .map((line, i) => ({ fields: line.trim().split(/\s+/), number: i + 1 }))
    .filter(({ fields }) => fields[0] !== "");
}

function keep(text: string, wanted: (fields: string[]) => boolean): string {
  const kept = text.split("\n").filter((line) => line.trim() !== "" && wanted(line.trim().split(/\s+/)));
  return kept.map((line) => `${line}\n`).join("");
}
