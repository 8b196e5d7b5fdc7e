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
    if (reserved) ctx.addIssue({ code: "custom", message: `must not start with "${reserved}": LVM reserves it` });
  });
}
