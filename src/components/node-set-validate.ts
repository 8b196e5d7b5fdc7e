/**
 * The parts of a NodeSet's args check that do not need its types (node-set.ts's validate() uses
 * them): the zod schema of the args besides the spec, and the checks that need the checked spec. A
 * separate file because node-set.ts had grown past 350 lines; validate() stays there, with
 * NodeSetArgs, so that this file imports nothing from it (src/imports.test.ts).
 */
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { classObjectName, dnsSubdomainProblem, type LVMNodeSetSpec, type ValidationProblem } from "../api";
import { labels, namespaceName, nonEmptyStringInput, objectName } from "./validate-args";

/** A URL checked when it is known; an Output (an AgentHost's endpoint) is checked by the provider. */
const agentUrl = z.union([
  z.custom<pulumi.Output<string>>((v) => pulumi.Output.isInstance(v)),
  z.string().superRefine((url, ctx) => {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      // reported below
    }
    if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:"))
      ctx.addIssue({
        code: "custom",
        message: `must be an http:// or https:// URL (got ${JSON.stringify(url)})`,
      });
  }),
]);

/** A map keyed by node name (agents, approvals): each key that is not one, by its path. */
function nodeNameKeys(map: Record<string, unknown>, ctx: z.RefinementCtx): void {
  for (const node of Object.keys(map)) {
    const problem = dnsSubdomainProblem(node);
    if (problem) ctx.addIssue({ code: "custom", path: [node], message: `is not a node name: it ${problem}` });
  }
}

/** The args besides the spec (nodeSelector, template), which the API's own schema checks. */
export const otherArgsSchema = z.strictObject({
  nodeSetName: objectName.optional(),
  namespace: namespaceName.optional(),
  labels: labels.optional(),
  defaultStorageClass: z.boolean().optional(),
  agents: z
    .record(
      z.string(),
      z.strictObject({
        url: agentUrl,
        token: nonEmptyStringInput,
        caCertificate: z
          .union([z.string(), z.custom<pulumi.Output<string>>((v) => pulumi.Output.isInstance(v))])
          .optional(),
      }),
    )
    .superRefine(nodeNameKeys)
    .optional(),
  cluster: z
    .strictObject({
      kubeconfig: nonEmptyStringInput,
      context: z.string().min(1).optional(),
      serviceAccountName: nonEmptyStringInput,
    })
    .optional(),
  approvals: z
    .record(
      z.string(),
      z.union([
        z.custom<pulumi.Output<string>>((v) => pulumi.Output.isInstance(v)),
        z.string().regex(/^[0-9a-f]{64}$/, {
          error: "must be a plan's hash: 64 lower-case hex digits (status.pendingApproval.hash)",
        }),
      ]),
    )
    .superRefine(nodeNameKeys)
    .optional(),
  awaitNodesReady: z.boolean().optional(),
  readyTimeoutSeconds: z.number().int().positive().optional(),
});

/** defaultStorageClass needs a default device class that creates its StorageClass. */
export function defaultClassProblems(spec: LVMNodeSetSpec): ValidationProblem[] {
  const dc = (spec.template.deviceClasses ?? []).find((c) => c.default);
  if (!dc)
    return [
      {
        path: "args.defaultStorageClass",
        message: "is true, but no device class of the template is the default",
      },
    ];
  if (classObjectName(dc, dc.storageClass) === undefined)
    return [
      {
        path: "args.defaultStorageClass",
        message: `is true, but the default device class "${dc.name}" creates no StorageClass (storageClass.creationPolicy Never)`,
      },
    ];
  return [];
}

export function defaultNameProblems(name: string, nodeSetName: string | undefined): ValidationProblem[] {
  if (nodeSetName !== undefined) return [];
  const problem = dnsSubdomainProblem(name);
  return problem
    ? [
        {
          path: "args.nodeSetName",
          message: `defaults to the component name, which ${problem}; set nodeSetName`,
        },
      ]
    : [];
}
