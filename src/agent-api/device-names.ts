import type { z } from "zod";

/** Selector keys whose values name devices: a kernel name ("sdb") or a path under /dev. */
export const DEVICE_NAME_KEYS = ["kname", "path", "symlink"] as const;

/**
 * Why `value` is not an acceptable device name in a request, or undefined. Accepted: a kernel name
 * ("sdb", "nvme0n1", "dm-3", "mapper/vg-lv") or a normalized path under /dev/, made of letters,
 * digits and `/ _ . : + -` only: no `..`, nothing outside /dev, no shell metacharacters.
 */
export function deviceNameProblem(value: string): string | undefined {
  if (value.startsWith("/")) return devicePathProblem(value);
  if (!/^[A-Za-z0-9][A-Za-z0-9/_.:+-]*$/.test(value))
    return "must be a kernel name or a /dev/ path of letters, digits and / _ . : + - only";
  if (value.split("/").some((seg) => seg === ".." || seg === "." || seg === ""))
    return "contains a . or .. or empty segment";
  return undefined;
}

interface SelectorShape {
  volumeGroups: ReadonlyArray<{
    deviceSelector: {
      deviceSelectorTerms: ReadonlyArray<{
        matchExpressions: ReadonlyArray<{ key: string; values?: readonly string[] }>;
      }>;
    };
  }>;
}

/** zod refinement: every device name in the spec's selectors passes deviceNameProblem. */
export function checkDeviceNames(spec: SelectorShape, ctx: z.RefinementCtx): void {
  spec.volumeGroups.forEach((vg, v) =>
    vg.deviceSelector.deviceSelectorTerms.forEach((term, t) =>
      term.matchExpressions.forEach((expr, e) => {
        if (!(DEVICE_NAME_KEYS as readonly string[]).includes(expr.key)) return;
        expr.values?.forEach((value, i) => {
          const problem = deviceNameProblem(value);
          if (problem)
            ctx.addIssue({
              code: "custom",
              path: [
                "volumeGroups",
                v,
                "deviceSelector",
                "deviceSelectorTerms",
                t,
                "matchExpressions",
                e,
                "values",
                i,
              ],
              message: `device ${JSON.stringify(value)} ${problem}`,
            });
        });
      }),
    ),
  );
}

/** Why `p` is not an acceptable device path for the allow-list, or undefined. */
export function devicePathProblem(p: string): string | undefined {
  if (!p.startsWith("/dev/")) return "is not under /dev/";
  if (!/^\/dev\/[A-Za-z0-9/_.:+-]+$/.test(p))
    return "contains characters other than letters, digits and / _ . : + -";
  if (p.split("/").some((seg) => seg === ".." || seg === ".")) return "contains a . or .. segment";
  if (p.endsWith("/") || p.includes("//")) return "is not a normalized path";
  return undefined;
}
