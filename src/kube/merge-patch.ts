import { jsonEqual } from "./json-equal";

/**
 * The JSON merge patch (RFC 7386) that turns `from` into `to`: changed and new keys with their new
 * values, removed keys as null, arrays and scalars replaced whole. Undefined when they are equal.
 *
 * @example mergePatch({ a: 1, b: { c: 2, d: 3 } }, { a: 1, b: { c: 5 } }) // { b: { c: 5, d: null } }
 */
export function mergePatch(from: unknown, to: unknown): unknown {
  if (jsonEqual(from, to)) return undefined;
  if (!isPlainObject(from) || !isPlainObject(to)) return to;
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(from)) if (!(key in to)) patch[key] = null;
  for (const [key, value] of Object.entries(to)) {
    const sub = key in from ? mergePatch(from[key], value) : value;
    if (sub !== undefined) patch[key] = sub;
  }
  return patch;
}

/** Applies a merge patch (RFC 7386), for tests and simulations of the API server. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = applyMergePatch(out[key], value);
  }
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
