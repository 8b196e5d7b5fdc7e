import { z } from "zod";
import { dnsSubdomainProblem, labelKeyProblem, labelValueProblem } from "./names";
import { parseQuantity } from "./quantity";

/* ---------------------------------------------------------------- node selector (core/v1) ---- */

export const NODE_SELECTOR_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"] as const;

const nodeSelectorRequirement = z
  .strictObject({
    key: z
      .string()
      .min(1)
      .max(317)
      .meta({ description: "The label key (matchExpressions) or field (matchFields) to test." }),
    operator: z.enum(NODE_SELECTOR_OPERATORS).meta({ description: "How `key` relates to `values`." }),
    values: z.array(z.string().max(253)).max(256).optional().meta({
      description:
        "For In/NotIn: one or more values; for Exists/DoesNotExist: none; for Gt/Lt: exactly one integer.",
    }),
  })
  .superRefine((r, ctx) => {
    checkValueCount(r.operator, r.values, ["In", "NotIn"], ["Gt", "Lt"], ctx);
    if (
      (r.operator === "Gt" || r.operator === "Lt") &&
      r.values?.length === 1 &&
      !/^-?\d+$/.test(r.values[0]!)
    )
      ctx.addIssue({
        code: "custom",
        path: ["values", 0],
        message: `${r.operator} needs an integer (got "${r.values[0]}")`,
      });
  })
  .meta({
    description: "A node selector requirement, as in core/v1 NodeSelectorRequirement.",
    "x-kubernetes-validations": [
      {
        rule: "self.operator in ['In', 'NotIn'] ? has(self.values) && size(self.values) > 0 : true",
        message: "In and NotIn need at least one value",
      },
      {
        rule: "self.operator in ['Exists', 'DoesNotExist'] ? !has(self.values) || size(self.values) == 0 : true",
        message: "Exists and DoesNotExist take no values",
      },
      {
        rule: "self.operator in ['Gt', 'Lt'] ? has(self.values) && size(self.values) == 1 : true",
        message: "Gt and Lt take exactly one value",
      },
    ],
  });

type NodeSelectorRequirement = z.infer<typeof nodeSelectorRequirement>;

/**
 * Node selectors become the node affinity of TopoLVM's DaemonSet, so they follow the apiserver's rules
 * for it (a selector it refuses would only fail later, when the DaemonSet is created): matchExpressions
 * use label keys and label values...
 */
function checkMatchExpression(e: NodeSelectorRequirement, at: PropertyKey[], ctx: z.RefinementCtx) {
  const keyProblem = labelKeyProblem(e.key);
  if (keyProblem) ctx.addIssue({ code: "custom", path: [...at, "key"], message: keyProblem });
  e.values?.forEach((v, j) => {
    const problem = labelValueProblem(v);
    if (problem) ctx.addIssue({ code: "custom", path: [...at, "values", j], message: problem });
  });
}

/** ... and in matchFields only `metadata.name`, with In or NotIn and exactly one node name. */
function checkMatchField(f: NodeSelectorRequirement, at: PropertyKey[], ctx: z.RefinementCtx) {
  if (f.key !== "metadata.name")
    ctx.addIssue({
      code: "custom",
      path: [...at, "key"],
      message: `only "metadata.name" is supported (got "${f.key}")`,
    });
  if (f.operator !== "In" && f.operator !== "NotIn")
    ctx.addIssue({
      code: "custom",
      path: [...at, "operator"],
      message: `matchFields only supports In and NotIn (got "${f.operator}")`,
    });
  else if (f.values?.length !== undefined && f.values.length > 1)
    ctx.addIssue({
      code: "custom",
      path: [...at, "values"],
      message: `matchFields ${f.operator} takes exactly one node name (got ${f.values.length})`,
    });
  if (f.key === "metadata.name")
    f.values?.forEach((v, j) => {
      const problem = dnsSubdomainProblem(v);
      if (problem)
        ctx.addIssue({ code: "custom", path: [...at, "values", j], message: `a node name ${problem}` });
    });
}

const nodeSelectorTerm = z
  .strictObject({
    matchExpressions: z
      .array(nodeSelectorRequirement)
      .max(32)
      .optional()
      .meta({ description: "Node label requirements, ANDed." }),
    matchFields: z.array(nodeSelectorRequirement).max(32).optional().meta({
      description:
        "Node field requirements, ANDed. Only `metadata.name` with In or NotIn and exactly one node name, as in core/v1.",
    }),
  })
  .superRefine((term, ctx) => {
    if (!term.matchExpressions?.length && !term.matchFields?.length)
      ctx.addIssue({
        code: "custom",
        message: "a node selector term needs at least one matchExpression or matchField",
      });
    term.matchExpressions?.forEach((e, i) => checkMatchExpression(e, ["matchExpressions", i], ctx));
    term.matchFields?.forEach((f, i) => checkMatchField(f, ["matchFields", i], ctx));
  })
  .meta({
    description: "Requirements that are ANDed; a node matches the term when all of them hold.",
    "x-kubernetes-validations": [
      {
        rule: "(has(self.matchExpressions) && size(self.matchExpressions) > 0) || (has(self.matchFields) && size(self.matchFields) > 0)",
        message: "a node selector term needs at least one matchExpression or matchField",
      },
      {
        rule: "!has(self.matchFields) || self.matchFields.all(f, f.key == 'metadata.name' && f.operator in ['In', 'NotIn'] && has(f.values) && size(f.values) == 1)",
        message: "matchFields only supports metadata.name with In or NotIn and exactly one value",
      },
    ],
  });

/**
 * Values one selector holds in all its terms together, at most. The lists' own limits (16 terms of
 * 32 requirements of 256 values) allow objects of megabytes that select nobody, each read by every
 * replica's caches and every review; real selectors hold a few values, a list of node names a few
 * hundred.
 */
export const MAX_SELECTOR_VALUES = 1024;

/** The message of the size cap, the same in validate, the webhook and the CRD's CEL rule. */
export function selectorSizeMessage(what: "node" | "device"): string {
  return `a ${what} selector holds at most ${MAX_SELECTOR_VALUES} values in all its terms together`;
}

/** The CEL sum of the values of `lists` (requirement lists) of every term in `terms`. */
function valuesCel(terms: string, lists: readonly string[]): string {
  const perTerm = lists
    .map((l) => `(has(t.${l}) ? t.${l}.map(e, has(e.values) ? size(e.values) : 0).sum() : 0)`)
    .join(" + ");
  return `self.${terms}.map(t, ${perTerm}).sum() <= ${MAX_SELECTOR_VALUES}`;
}

function checkSelectorSize(
  terms: ReadonlyArray<
    Readonly<Record<string, ReadonlyArray<{ readonly values?: readonly string[] }> | undefined>>
  >,
  what: "node" | "device",
  at: string,
  ctx: z.RefinementCtx,
): void {
  let total = 0;
  for (const t of terms)
    for (const list of Object.values(t)) for (const r of list ?? []) total += r.values?.length ?? 0;
  if (total > MAX_SELECTOR_VALUES)
    ctx.addIssue({ code: "custom", path: [at], message: `${selectorSizeMessage(what)} (got ${total})` });
}

export const nodeSelectorSchema = z
  .strictObject({
    nodeSelectorTerms: z
      .array(nodeSelectorTerm)
      .min(1)
      .max(16)
      .meta({ description: "Terms ORed: a node is selected when any term matches." }),
  })
  .superRefine((s, ctx) => checkSelectorSize(s.nodeSelectorTerms, "node", "nodeSelectorTerms", ctx))
  .meta({
    description: "Which nodes this set applies to, as core/v1 NodeSelector. Omitted: every node.",
    "x-kubernetes-validations": [
      {
        rule: valuesCel("nodeSelectorTerms", ["matchExpressions", "matchFields"]),
        message: selectorSizeMessage("node"),
      },
    ],
  });

/* ------------------------------------------------------------------------ device selector ---- */

/**
 * Device attributes a volume group can select on. Values of `kname`, `path` and `symlink` may be a
 * kernel name ("sdb"), a device path ("/dev/sdb") or any udev symlink ("/dev/disk/by-id/wwn-0x5000…",
 * "/dev/mapper/…"): they are resolved to the kernel name before matching (docs/device-selection.md).
 */
export const DEVICE_KEYS = [
  "kname",
  "path",
  "symlink",
  "serial",
  "wwn",
  "model",
  "vendor",
  "size",
  "rotational",
  "type",
  "partlabel",
] as const;
export type DeviceKey = (typeof DEVICE_KEYS)[number];

/**
 * `Any` matches every device and marks the volume group a wildcard: it only takes devices that no
 * other volume group selects. `Exists`/`DoesNotExist` test that the attribute is known and not empty.
 * `GreaterThan`/`LessThan` compare numbers (`size` takes a quantity such as "30Gi").
 */
export const DEVICE_OPERATORS = [
  "In",
  "NotIn",
  "Any",
  "Exists",
  "DoesNotExist",
  "GreaterThan",
  "LessThan",
] as const;
export type DeviceOperator = (typeof DEVICE_OPERATORS)[number];

const deviceSelectorRequirement = z
  .strictObject({
    key: z.enum(DEVICE_KEYS).meta({ description: "The device attribute to test." }),
    operator: z.enum(DEVICE_OPERATORS).meta({ description: "How the attribute relates to `values`." }),
    values: z.array(z.string().max(4096)).max(256).optional().meta({
      description:
        "For In/NotIn: one or more values; for Any/Exists/DoesNotExist: none; for GreaterThan/LessThan: exactly one number (a quantity for `size`).",
    }),
  })
  .superRefine((r, ctx) => {
    checkValueCount(r.operator, r.values, ["In", "NotIn"], ["GreaterThan", "LessThan"], ctx);
    if ((r.operator === "GreaterThan" || r.operator === "LessThan") && r.values?.length === 1) {
      const value = r.values[0]!;
      if (r.key === "size") {
        const q = parseQuantity(value);
        if (!q.ok) ctx.addIssue({ code: "custom", path: ["values", 0], message: q.message });
      } else if (r.key !== "rotational") {
        ctx.addIssue({
          code: "custom",
          path: ["operator"],
          message: `${r.operator} only applies to "size" and "rotational" (got key "${r.key}")`,
        });
      }
    }
    if (r.key === "rotational") {
      for (const [i, v] of (r.values ?? []).entries())
        if (!["0", "1", "true", "false"].includes(v))
          ctx.addIssue({
            code: "custom",
            path: ["values", i],
            message: `rotational is "true" or "false" (got "${v}")`,
          });
    }
  })
  .meta({
    description: "One requirement on a device attribute.",
    "x-kubernetes-validations": [
      {
        rule: "self.operator in ['In', 'NotIn'] ? has(self.values) && size(self.values) > 0 : true",
        message: "In and NotIn need at least one value",
      },
      {
        rule: "self.operator in ['Any', 'Exists', 'DoesNotExist'] ? !has(self.values) || size(self.values) == 0 : true",
        message: "Any, Exists and DoesNotExist take no values",
      },
      {
        rule: "self.operator in ['GreaterThan', 'LessThan'] ? has(self.values) && size(self.values) == 1 : true",
        message: "GreaterThan and LessThan take exactly one value",
      },
      {
        rule: "self.operator in ['GreaterThan', 'LessThan'] ? self.key in ['size', 'rotational'] : true",
        message: "GreaterThan and LessThan only apply to size and rotational",
      },
    ],
  });

const deviceSelectorTerm = z
  .strictObject({
    matchExpressions: z
      .array(deviceSelectorRequirement)
      .max(32)
      .meta({ description: "Requirements ANDed: a device matches the term when all hold." }),
  })
  .superRefine((term, ctx) => {
    if (term.matchExpressions.length === 0)
      ctx.addIssue({
        code: "custom",
        path: ["matchExpressions"],
        message:
          "a device selector term needs at least one expression (an empty term would match every disk)",
      });
  })
  .meta({
    description: "A device selector term.",
    "x-kubernetes-validations": [
      {
        rule: "size(self.matchExpressions) > 0",
        message:
          "a device selector term needs at least one expression (an empty term would match every disk)",
      },
    ],
  });

export const deviceSelectorSchema = z
  .strictObject({
    deviceSelectorTerms: z
      .array(deviceSelectorTerm)
      .min(1, { error: "needs at least one term" })
      .max(16)
      .meta({ description: "Terms ORed: a device is selected when any term matches." }),
  })
  .superRefine((s, ctx) => checkSelectorSize(s.deviceSelectorTerms, "device", "deviceSelectorTerms", ctx))
  .meta({
    description: "Which block devices of a node belong to the volume group.",
    "x-kubernetes-validations": [
      {
        rule: valuesCel("deviceSelectorTerms", ["matchExpressions"]),
        message: selectorSizeMessage("device"),
      },
    ],
  });

/** True when any term of the selector uses the `Any` operator (the volume group is a wildcard). */
export function isWildcardSelector(selector: z.infer<typeof deviceSelectorSchema>): boolean {
  return selector.deviceSelectorTerms.some((t) => t.matchExpressions.some((e) => e.operator === "Any"));
}

/* ------------------------------------------------------------------------------- helpers ---- */

function checkValueCount(
  operator: string,
  values: string[] | undefined,
  needsSome: readonly string[],
  needsOne: readonly string[],
  ctx: z.RefinementCtx,
) {
  const count = values?.length ?? 0;
  if (needsSome.includes(operator)) {
    if (count === 0)
      ctx.addIssue({ code: "custom", path: ["values"], message: `${operator} needs at least one value` });
  } else if (needsOne.includes(operator)) {
    if (count !== 1)
      ctx.addIssue({
        code: "custom",
        path: ["values"],
        message: `${operator} takes exactly one value (got ${count})`,
      });
  } else if (count > 0) {
    ctx.addIssue({ code: "custom", path: ["values"], message: `${operator} takes no values (got ${count})` });
  }
}
