/**
 * canonicalJson (hash.ts) written straight into bytes, as UTF-8: what a plan's hash is taken over,
 * without building the text as a string first and encoding it again for the hash. For the values a
 * plan is made of (plain objects, arrays, strings, numbers, booleans, null) the bytes are exactly
 * Buffer.from(canonicalJson(value)); for anything else (a key that looks like an array index, a
 * class instance, toJSON, bigint, a cycle) the writer says so and the caller takes canonicalJson's path.
 */
export class CanonicalBytes {
  private bytes = new Uint8Array(64 * 1024);
  private length = 0;

  /** Starts over (keeps the buffer). */
  reset(): void {
    this.length = 0;
  }

  /** The bytes written since reset; a view of the writer's buffer, valid until the next write. */
  view(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }

  /** Text known to need no escaping, written as is (ASCII only: JSON punctuation and key names). */
  raw(text: string): void {
    this.room(text.length);
    const out = this.bytes;
    let at = this.length;
    for (let i = 0; i < text.length; i++) out[at++] = text.charCodeAt(i);
    this.length = at;
  }

  private byte(b: number): void {
    if (this.length === this.bytes.length) this.room(1);
    this.bytes[this.length++] = b;
  }

  /** Bytes written before (the canonical JSON of a value, kept by the caller). */
  copy(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.bytes.set(bytes, this.length);
    this.length += bytes.length;
  }

  /**
   * value(v) for an object that is not changed afterwards (a spec shared by every node planned with
   * it, as canonicalJsonOnce assumes): its bytes are written once and copied from then on.
   */
  once(v: object): boolean {
    const bytes = onceBytes.get(v);
    if (bytes !== undefined) {
      this.copy(bytes);
      return true;
    }
    const start = this.length;
    if (!this.value(v)) return false;
    onceBytes.set(v, this.bytes.slice(start, this.length));
    return true;
  }

  /** canonicalJson(value) as UTF-8; false (and the bytes unspecified) when the value is not one it writes. */
  value(v: unknown, depth = 0): boolean {
    if (v === null) this.raw("null");
    else if (typeof v === "string") this.string(v);
    else if (typeof v === "number") this.number(v);
    else if (typeof v === "boolean") this.raw(v ? "true" : "false");
    else if (typeof v !== "object" || depth > MAX_DEPTH) return false;
    else if (Array.isArray(v)) return this.array(v, depth + 1);
    else return this.object(v as Record<string, unknown>, depth + 1);
    return true;
  }

  private array(v: readonly unknown[], depth: number): boolean {
    if (Object.getPrototypeOf(v) !== Array.prototype) return false;
    this.byte(0x5b); // [
    for (let i = 0; i < v.length; i++) {
      if (i > 0) this.byte(0x2c); // ,
      const item = v[i];
      // As JSON.stringify: what it leaves out of an object is null in an array.
      if (item === undefined || typeof item === "function" || typeof item === "symbol") this.raw("null");
      else if (!this.value(item, depth)) return false;
    }
    this.byte(0x5d); // ]
    return true;
  }

  private object(record: Record<string, unknown>, depth: number): boolean {
    const proto: unknown = Object.getPrototypeOf(record);
    if ((proto !== Object.prototype && proto !== null) || "toJSON" in record) return false;
    // Most of a plan is built with its keys in sorted order (plan-objects.ts): written as they come,
    // without allocating. At the first key out of order, the object is written again, keys sorted.
    const start = this.length;
    this.byte(0x7b); // {
    let previous: string | undefined;
    let written = 0;
    for (const key in record) {
      if (!hasOwn.call(record, key)) continue;
      if (indexLike(key)) return false;
      if (previous !== undefined && previous > key) {
        this.length = start;
        return this.sortedObject(record, depth);
      }
      previous = key;
      // record[key] here, in the for-in loop itself, is a field load V8 does not have to look up.
      if ((written = this.member(key, record[key], written, depth)) < 0) return false;
    }
    this.byte(0x7d); // }
    return true;
  }

  private sortedObject(record: Record<string, unknown>, depth: number): boolean {
    const keys = Object.keys(record);
    for (const key of keys) if (indexLike(key)) return false;
    keys.sort();
    this.byte(0x7b); // {
    let written = 0;
    for (const key of keys) if ((written = this.member(key, record[key], written, depth)) < 0) return false;
    this.byte(0x7d); // }
    return true;
  }

  /**
   * `"key":value`, after a comma when members were written before; leaves out what JSON.stringify
   * leaves out. Returns the count of members written so far, or -1 when the value is not one it writes.
   */
  private member(key: string, item: unknown, written: number, depth: number): number {
    if (item === undefined || typeof item === "function" || typeof item === "symbol") return written;
    if (written > 0) this.byte(0x2c); // ,
    this.string(key);
    this.byte(0x3a); // :
    return this.value(item, depth) ? written + 1 : -1;
  }

  /** JSON.stringify(s) as UTF-8 (lone surrogates escaped as \udxxx, as JSON.stringify does). */
  private string(s: string): void {
    // At most 6 bytes per UTF-16 unit (\u001f), 2 quotes.
    this.room(6 * s.length + 2);
    const out = this.bytes;
    let at = this.length;
    out[at++] = QUOTE;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) {
        const escape = ESCAPES[c]!;
        if (escape === 0) out[at++] = c;
        else if (escape === 1) at = unicodeEscape(out, at, c);
        else {
          out[at++] = BACKSLASH;
          out[at++] = escape;
        }
      } else if (c < 0x800) {
        out[at++] = 0xc0 | (c >> 6);
        out[at++] = 0x80 | (c & 0x3f);
      } else if (c >= 0xd800 && c <= 0xdfff) {
        const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
        if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          const point = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
          out[at++] = 0xf0 | (point >> 18);
          out[at++] = 0x80 | ((point >> 12) & 0x3f);
          out[at++] = 0x80 | ((point >> 6) & 0x3f);
          out[at++] = 0x80 | (point & 0x3f);
          i++;
        } else at = unicodeEscape(out, at, c);
      } else {
        out[at++] = 0xe0 | (c >> 12);
        out[at++] = 0x80 | ((c >> 6) & 0x3f);
        out[at++] = 0x80 | (c & 0x3f);
      }
    }
    out[at++] = QUOTE;
    this.length = at;
  }

  /** JSON.stringify(n): integers digit by digit, other numbers as String gives them, NaN/±Infinity null. */
  private number(n: number): void {
    if (!Number.isFinite(n)) return this.raw("null");
    if (!Number.isSafeInteger(n)) return this.raw(String(n));
    this.room(17);
    const out = this.bytes;
    let at = this.length;
    let rest = n;
    if (rest < 0) {
      out[at++] = 0x2d;
      rest = -rest;
    }
    let digits = 1;
    for (let p = 10; p <= rest; p *= 10) digits++;
    at += digits;
    for (let i = at - 1; i >= at - digits; i--) {
      out[i] = 0x30 + (rest % 10);
      rest = Math.floor(rest / 10);
    }
    this.length = at;
  }

  private room(n: number): void {
    if (this.length + n <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < this.length + n) size *= 2;
    const bigger = new Uint8Array(size);
    bigger.set(this.bytes.subarray(0, this.length));
    this.bytes = bigger;
  }
}

/** Deeper than this is taken for a cycle: canonicalJson's path then throws as it always has. */
const MAX_DEPTH = 256;
const hasOwn = Object.prototype.hasOwnProperty;
const onceBytes = new WeakMap<object, Uint8Array>();
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const HEX = "0123456789abcdef";

/** Per ASCII code: 0 written as is, 1 as \u00XX, else the letter after a backslash. */
const ESCAPES = new Uint8Array(0x80);
for (let c = 0; c < 0x20; c++) ESCAPES[c] = 1;
for (const [c, letter] of [
  [0x08, "b"],
  [0x09, "t"],
  [0x0a, "n"],
  [0x0c, "f"],
  [0x0d, "r"],
  [QUOTE, '"'],
  [BACKSLASH, "\\"],
] as const)
  ESCAPES[c] = letter.charCodeAt(0);

function unicodeEscape(out: Uint8Array, at: number, c: number): number {
  out[at++] = BACKSLASH;
  out[at++] = 0x75; // u
  for (let shift = 12; shift >= 0; shift -= 4) out[at++] = HEX.charCodeAt((c >> shift) & 0xf);
  return at;
}

/** A key V8 lists before the others, in numeric order ("0", "17"): canonicalJson's other path. */
function indexLike(key: string): boolean {
  const c = key.charCodeAt(0);
  return c >= 48 && c <= 57 && INDEX_LIKE.test(key);
}

const INDEX_LIKE = /^(0|[1-9]\d*)$/;
