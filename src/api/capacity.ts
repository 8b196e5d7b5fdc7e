import { z } from "zod";

/**
 * When a thin pool counts as nearly full (the LVMNode's ThinPoolNearlyFull condition, its Events, and
 * the default alert thresholds of LvmSystem's monitoring): data or metadata use at or above
 * `warningPercent`, critical at or above `criticalPercent`. The defaults are LVMS's 75 and 85.
 */
export const DEFAULT_CAPACITY = { warningPercent: 75, criticalPercent: 85 } as const;

const percent = (what: string, fallback: number) =>
  z
    .number({ error: (i) => `must be a whole number between 1 and 100 (got ${JSON.stringify(i.input)})` })
    .int({ error: (i) => `must be a whole number between 1 and 100 (got ${String(i.input)})` })
    .min(1, { error: (i) => `must be between 1 and 100 (got ${String(i.input)})` })
    .max(100, { error: (i) => `must be between 1 and 100 (got ${String(i.input)})` })
    .optional()
    .meta({ description: `${what} @default ${fallback}` });

const W = DEFAULT_CAPACITY.warningPercent;
const C = DEFAULT_CAPACITY.criticalPercent;

export const capacitySchema = z
  .strictObject({
    warningPercent: percent(
      "A thin pool whose data or metadata use reaches this percent is nearly full (warning).",
      W,
    ),
    criticalPercent: percent("... and at this percent, critically full.", C),
  })
  .superRefine((c, ctx) => {
    const { warningPercent, criticalPercent } = capacityThresholds(c);
    if (warningPercent >= criticalPercent)
      ctx.addIssue({
        code: "custom",
        path: [c.warningPercent !== undefined ? "warningPercent" : "criticalPercent"],
        message: `warningPercent (${warningPercent}) must be below criticalPercent (${criticalPercent})`,
      });
  })
  .meta({
    description: "Thin pool usage thresholds: the LVMNode's ThinPoolNearlyFull condition and its Events.",
    "x-kubernetes-validations": [
      {
        rule: `(has(self.warningPercent) ? self.warningPercent : ${W}) < (has(self.criticalPercent) ? self.criticalPercent : ${C})`,
        message: "warningPercent must be below criticalPercent",
      },
    ],
  });

export type Capacity = z.infer<typeof capacitySchema>;

/** The thresholds in effect: the spec's, else the defaults. */
export function capacityThresholds(c: Capacity | undefined): {
  warningPercent: number;
  criticalPercent: number;
} {
  return {
    warningPercent: c?.warningPercent ?? W,
    criticalPercent: c?.criticalPercent ?? C,
  };
}
