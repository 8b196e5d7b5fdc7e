/** Reading what `pulumi` prints (NodeSetDisks' plans in `preview --diff`, a failure's diagnostics), for the engine-tier tests. */

/** The lines of `text` that contain `needle` (what a failed assertion should show, not the whole text). */
export const linesWith = (text: string, needle: string) => text.split("\n").filter((l) => l.includes(needle));

/**
 * One list of the node's plan (e.g. "claimed") as `pulumi preview --diff` shows it, the new value:
 * items shown unchanged or added (`+ [i]: "..."`), changed items' new text (`~ [i]: "old" => "new"`),
 * not the items of the previous plan (`- [i]: "..."`).
 */
export function planList(output: string, list: string): string[] {
  const lines = output.split("\n");
  const start = lines.findIndex((l) => new RegExp(`^\\s*[+~]?\\s*${list}\\s*:\\s*\\[`).test(l));
  if (start < 0) throw new Error(`no "${list}" list in the preview:\n${output}`);
  if (/\[\]\s*$/.test(lines[start]!)) return [];
  const items: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^\s*\]/.test(line)) return items;
    const m = /^\s*([+~-]?)\s*\[\d+\]: "(.*?)"(?: => "(.*)")?$/.exec(line);
    if (!m) throw new Error(`unexpected line in the "${list}" list of the preview: ${line}`);
    if (m[1] !== "-") items.push(m[3] ?? m[2]!);
  }
  throw new Error(`the "${list}" list of the preview does not end:\n${output}`);
}

/**
 * The Diagnostics section of a failed command, each line cut to `width` characters (the Command
 * provider's error quotes the whole script it ran).
 */
export function diagnostics(output: string, width = 300): string {
  const at = output.indexOf("Diagnostics:");
  return output
    .slice(at < 0 ? 0 : at)
    .split("\n")
    .map((l) => (l.length > width ? `${l.slice(0, width)}…` : l))
    .join("\n");
}
