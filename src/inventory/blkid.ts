import { compact } from "./raw-shape";

/**
 * `blkid -p -o export <device>`: low-level probing of one device, read-only. Used for what neither wipefs
 * nor lsblk (without udev) shows: the partition entry's name and type, read from the parent's table.
 *
 *   DEVNAME=/dev/loop0p1
 *   PART_ENTRY_SCHEME=gpt
 *   PART_ENTRY_NAME=EFI\ System
 *   PART_ENTRY_TYPE=c12a7328-f81f-11d2-ba4b-00a0c93ec93b
 *
 * Values are shell-escaped with backslashes. blkid prints nothing and exits 2 when it finds nothing.
 */
export interface BlkidFacts {
  /** TYPE: the filesystem / content signature, e.g. "ext4", "LVM2_member", "swap". */
  readonly type?: string;
  /** USAGE: "filesystem", "raid", "other", ... */
  readonly usage?: string;
  readonly uuid?: string;
  readonly label?: string;
  /** PTTYPE: "gpt", "dos" */
  readonly pttype?: string;
  /** PART_ENTRY_NAME: the GPT partition name (PARTLABEL). */
  readonly partlabel?: string;
  /** PART_ENTRY_TYPE: partition type GUID or MBR type code. */
  readonly parttype?: string;
}

/** The exact argv; exit status 2 means "nothing found", not failure. */
export function blkidArgv(device: string): string[] {
  return ["blkid", "-p", "-o", "export", device];
}

/** blkid's exit status when it found nothing on the device. */
export const BLKID_NOTHING_FOUND = 2;

/** KEY=value lines to a record, values unescaped ("EFI\ System" → "EFI System"). Lines without "=" are ignored. */
export function parseBlkidExport(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const eq = line.indexOf("=");
    if (eq <= 0) continue;
    out[line.slice(0, eq)] = line.slice(eq + 1).replace(/\\(.)/g, "$1");
  }
  return out;
}

/** The facts of one device's blkid output. */
export function blkidFacts(text: string): BlkidFacts {
  const v = parseBlkidExport(text);
  const value = (key: string) => v[key] || undefined;
  return compact({
    type: value("TYPE"),
    usage: value("USAGE"),
    uuid: value("UUID"),
    label: value("LABEL"),
    pttype: value("PTTYPE"),
    partlabel: value("PART_ENTRY_NAME"),
    parttype: value("PART_ENTRY_TYPE"),
  });
}
