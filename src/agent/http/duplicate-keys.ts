/**
 * The path of the first object key that appears twice in a JSON text (`spec.volumeGroups[0].name`),
 * or undefined. JSON.parse silently keeps the last of duplicate keys, so a body could show a reviewer
 * one value and act on another; the agent refuses such bodies. The text must already be valid JSON
 * (JSON.parse accepted it): this only tracks strings and nesting. Hand-written because no kept JSON
 * parser in our dependencies reports duplicates, and this scan is a single linear pass.
 */
export function duplicateKeyPath(text: string): string | undefined {
  type Frame = { keys: Set<string> | undefined; path: string; index: number; key?: string };
  const stack: Frame[] = [];
  let expectKey = false;
  const childPath = (f: Frame | undefined): string =>
    !f ? "" : f.keys ? (f.path ? `${f.path}.${f.key ?? ""}` : (f.key ?? "")) : `${f.path}[${f.index}]`;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      const top = stack.at(-1);
      if (expectKey && top?.keys) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        top.key = key;
        if (top.keys.has(key)) return childPath(top);
        top.keys.add(key);
        expectKey = false;
      }
      i = j;
    } else if (c === "{" || c === "[") {
      stack.push({ keys: c === "{" ? new Set() : undefined, path: childPath(stack.at(-1)), index: 0 });
      expectKey = c === "{";
    } else if (c === "}" || c === "]") stack.pop();
    else if (c === ",") {
      const top = stack.at(-1)!;
      if (top.keys) expectKey = true;
      else top.index++;
    }
  }
  return undefined;
}
