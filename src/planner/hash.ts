import { createHash } from "node:crypto";

/**
 * JSON with object keys sorted at every level and undefined members left out: the same value always
 * gives the same text, whatever order its keys were built in. Arrays keep their order (an undefined
 * element is null, as in JSON.stringify).
 *
 * Fast path: copy the value with every object's keys inserted in sorted order and let JSON.stringify
 * write it. That only works when no key looks like an array index (V8 keeps those first, in numeric
 * order); otherwise JSON.stringify gets every key, sorted, as an array replacer, whose order it follows.
 */
export function canonicalJson(value: unknown): string {
  const sorted = sortedCopy(value);
  return (
    (sorted === INDEX_KEY ? JSON.stringify(value, allKeysSorted(value)) : JSON.stringify(sorted)) ?? "null"
  );
}

const INDEX_KEY = Symbol("an object has an array-index-like key");
const INDEX_LIKE = /^(0|[1-9]\d*)$/;

/** The value with every object's keys in sorted order; objects and arrays already so are reused. */
function sortedCopy(v: unknown): unknown {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const item = sortedCopy(v[i]);
      if (item === INDEX_KEY) return INDEX_KEY;
      if (item !== v[i]) (out ??= v.slice())[i] = item;
    }
    return out ?? v;
  }
  const record = v as Record<string, unknown>;
  const keys = Object.keys(record);
  let inOrder = true;
  for (let i = 0; i < keys.length; i++) {
    if (INDEX_LIKE.test(keys[i]!)) return INDEX_KEY;
    if (i > 0 && keys[i - 1]! > keys[i]!) inOrder = false;
  }
  if (!inOrder) keys.sort();
  const items = new Array<unknown>(keys.length);
  let changed = !inOrder;
  for (let i = 0; i < keys.length; i++) {
    const item = (items[i] = sortedCopy(record[keys[i]!]));
    if (item === INDEX_KEY) return INDEX_KEY;
    if (item !== record[keys[i]!]) changed = true;
  }
  if (!changed) return v;
  // No prototype: on a plain object, assigning the key "__proto__" would set the prototype and drop
  // the member from the text (two different specs would share a hash).
  const out: Record<string, unknown> = Object.create(null);
  for (let i = 0; i < keys.length; i++) out[keys[i]!] = items[i];
  return out;
}

function allKeysSorted(value: unknown): string[] {
  const keys = new Set<string>();
  const visit = (v: unknown): void => {
    if (v === null || typeof v !== "object") return;
    if (Array.isArray(v)) for (const item of v) visit(item);
    else
      for (const k of Object.keys(v)) {
        keys.add(k);
        visit((v as Record<string, unknown>)[k]);
      }
  };
  visit(value);
  return [...keys].sort();
}

const canonicalCache = new WeakMap<object, string>();

/** canonicalJson of an object that is not changed afterwards (a spec shared by many nodes), computed once. */
export function canonicalJsonOnce(value: object): string {
  let text = canonicalCache.get(value);
  if (text === undefined) canonicalCache.set(value, (text = canonicalJson(value)));
  return text;
}

/** Lower-case hex sha256 of the given texts, concatenated. */
export function sha256Hex(...texts: readonly string[]): string {
  const hash = createHash("sha256");
  for (const t of texts) hash.update(t);
  return hash.digest("hex");
}

/** Lower-case hex sha256 of the canonical JSON of a value. */
export function sha256Canonical(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
