import { z } from "zod";

/**
 * Names of volume groups, device classes and thin pools end up in three places with different rules:
 * Kubernetes object names (StorageClass "lvms-<deviceClass>"), LVM names (vgcreate, lvcreate) and
 * TopoLVM's lvmd.yaml. We accept only names valid in all of them: a DNS-1123 label (lowercase
 * alphanumerics and '-', starting and ending alphanumeric, at most 63 characters), which is also a
 * valid LVM name, except that LVM reserves LV names starting with "snapshot" or "pvmove".
 */
export const DNS1123_LABEL_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
const DNS1123_LABEL = new RegExp(DNS1123_LABEL_PATTERN);
const LVM_RESERVED_LV_PREFIXES = ["snapshot", "pvmove"];

/** Why `name` is not a valid DNS-1123 label, or undefined when it is. */
export function dnsLabelProblem(name: string): string | undefined {
  if (name.length === 0) return "must not be empty";
  if (name.length > 63) return `must be at most 63 characters (got ${name.length})`;
  if (!DNS1123_LABEL.test(name))
    return `must be a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit (got "${name}")`;
  return undefined;
}

/** A volume group or device class name. */
export function resourceName(description: string) {
  return z
    .string()
    .superRefine((name, ctx) => {
      const problem = dnsLabelProblem(name);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .meta({ description, pattern: DNS1123_LABEL_PATTERN, minLength: 1, maxLength: 63 });
}

/** A logical volume name (thin pool): a resource name that LVM does not reserve. */
export function logicalVolumeName(description: string) {
  return resourceName(description).superRefine((name, ctx) => {
    const reserved = LVM_RESERVED_LV_PREFIXES.find((p) => name.startsWith(p));
    if (reserved)
      ctx.addIssue({ code: "custom", message: `must not start with "${reserved}": LVM reserves it` });
  });
}

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Why `name` is not a DNS-1123 subdomain (an object name such as a node's), or undefined when it is. */
export function dnsSubdomainProblem(name: string): string | undefined {
  if (name.length === 0) return "must not be empty";
  if (name.length > 253) return `must be at most 253 characters (got ${name.length})`;
  if (!DNS1123_SUBDOMAIN.test(name))
    return `must be a DNS-1123 subdomain: lowercase letters, digits, '-' and '.' (got "${name}")`;
  return undefined;
}

/** Why `key` is not a Kubernetes label key ("[prefix/]name"), or undefined when it is. */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.lastIndexOf("/");
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && dnsSubdomainProblem(prefix))
    return `must be a label key: its prefix must be a DNS-1123 subdomain (got "${key}")`;
  if (name.length === 0 || name.length > 63 || !LABEL_NAME.test(name))
    return `must be a label key: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, optionally after a DNS prefix and '/' (got "${key}")`;
  return undefined;
}

/** Why `value` is not a Kubernetes label value, or undefined when it is. */
export function labelValueProblem(value: string): string | undefined {
  if (value.length > 63 || !LABEL_VALUE.test(value))
    return `must be a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit (got "${value}")`;
  return undefined;
}
