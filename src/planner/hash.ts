import { createHash } from "node:crypto";

/**
 * JSON with object keys sorted at every level and undefined members left out: the same value always
 * gives the same text, whatever order its keys were built in. Arrays keep their order (an undefined
 * element is null, as in JSON.stringify). With `indent`, the same text laid out as JSON.stringify's
 * `space` argument lays it out (for people: `pulumi-lvm plan --json`); hashes use the compact text.
 *
 * Fast path: copy the value with every object's keys inserted in sorted order and let JSON.stringify
 * write it. That only works when no key looks like an array index (V8 keeps those first, in numeric
 * order); otherwise JSON.stringify gets every key, sorted, as an array replacer, whose order it follows.
 */
export function canonicalJson(value: unknown, indent?: number): string {
  const sorted = sortedCopy(value);
  return (
    (sorted === INDEX_KEY
      ? JSON.stringify(value, allKeysSorted(value), indent)
      : JSON.stringify(sorted, null, indent)) ?? "null"
  );
}

const INDEX_KEY = Symbol("an object has an array-index-like key");
const INDEX_LIKE = /^(0|[1-9]\d*)$/;
const hasOwn = Object.prototype.hasOwnProperty;

/** A key V8 would list before the others, in numeric order ("0", "17"): only those start with a digit. */
function indexLike(key: string): boolean {
  const c = key.charCodeAt(0);
  return c >= 48 && c <= 57 && INDEX_LIKE.test(key);
}

/** The value with every object's keys in sorted order; objects and arrays already so are reused. */
function sortedCopy(v: unknown): unknown {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const element: unknown = v[i];
      if (element === null || typeof element !== "object") continue; // most are strings (argv, reasons)
      const item = sortedCopy(element);
      if (item === INDEX_KEY) return INDEX_KEY;
      if (item !== element) (out ??= v.slice())[i] = item;
    }
    return out ?? v;
  }
  // The common case, a plan built in key order (plan-objects.ts): walked without allocating anything.
  const record = v as Record<string, unknown>;
  let previous: string | undefined;
  for (const key in record) {
    if (!hasOwn.call(record, key)) continue;
    if (indexLike(key)) return INDEX_KEY;
    if (previous !== undefined && previous > key) return sortedObjectCopy(record);
    previous = key;
    const value = record[key];
    if (value === null || typeof value !== "object") continue;
    const item = sortedCopy(value);
    if (item === INDEX_KEY) return INDEX_KEY;
    if (item !== value) return sortedObjectCopy(record);
  }
  return v;
}

/** A copy of an object with its keys inserted in sorted order (and its members sorted likewise). */
function sortedObjectCopy(record: Record<string, unknown>): unknown {
  const keys = Object.keys(record);
  for (const key of keys) if (indexLike(key)) return INDEX_KEY;
  keys.sort();
  // No prototype: on a plain object, assigning the key "__proto__" would set the prototype and drop
  // the member from the text (two different specs would share a hash).
  const out: Record<string, unknown> = Object.create(null);
  for (const key of keys) {
    const item = sortedCopy(record[key]);
    if (item === INDEX_KEY) return INDEX_KEY;
    out[key] = item;
  }
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
