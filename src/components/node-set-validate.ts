import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import {
  checkLVMNodeSetSpec,
  classObjectName,
  dnsSubdomainProblem,
  type LVMNodeSetSpec,
  type ValidationProblem,
} from "../api";
import { DEFAULT_NAMESPACE } from "./lvm-system";
import type { NodeSetArgs } from "./node-set";
import { DEFAULT_READY_TIMEOUT_SECONDS } from "./node-set-resource";
import { servedProblems, type ServedNodeSets } from "./served-node-sets";
import {
  argsProblems,
  labels,
  namespaceName,
  nonEmptyStringInput,
  objectName,
  throwIfInvalid,
} from "./validate-args";

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

/** The args besides the spec (nodeSelector, template), which the API's own schema checks. */
const otherArgsSchema = z.strictObject({
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
    .superRefine((agents, ctx) => {
      for (const node of Object.keys(agents)) {
        const problem = dnsSubdomainProblem(node);
        if (problem)
          ctx.addIssue({ code: "custom", path: [node], message: `is not a node name: it ${problem}` });
      }
    })
    .optional(),
  cluster: z
    .strictObject({
      kubeconfig: nonEmptyStringInput,
      context: z.string().min(1).optional(),
      serviceAccountName: nonEmptyStringInput,
    })
    .optional(),
  awaitNodesReady: z.boolean().optional(),
  readyTimeoutSeconds: z.number().int().positive().optional(),
});

/** A NodeSet's args checked (every problem at once, by path) and resolved to what it creates. */
export function validateNodeSet(
  name: string,
  args: NodeSetArgs,
  served: ServedNodeSets | undefined,
): { spec: LVMNodeSetSpec; nodeSetName: string; namespace: string; readyTimeoutSeconds?: number } {
  const {
    nodeSetName,
    namespace,
    labels: nodeSetLabels,
    defaultStorageClass,
    agents,
    cluster,
    awaitNodesReady,
    readyTimeoutSeconds,
    ...spec
  } = args ?? ({} as NodeSetArgs);
  const problems: ValidationProblem[] = [
    ...argsProblems(otherArgsSchema, {
      nodeSetName,
      namespace,
      labels: nodeSetLabels,
      defaultStorageClass,
      agents,
      cluster,
      awaitNodesReady,
      readyTimeoutSeconds,
    }),
    ...defaultNameProblems(name, nodeSetName),
  ];
  if (agents && cluster)
    problems.push({
      path: "args.cluster",
      message: "cannot be used together with agents: pick sandbox mode (agents) or cluster mode (cluster)",
    });
  const checked = checkLVMNodeSetSpec(spec, ["args"]);
  if (!checked.ok) problems.push(...checked.problems);
  else if (defaultStorageClass) problems.push(...defaultClassProblems(checked.value));
  else if (served) problems.push(...servedProblems(served, nodeSetName ?? name, nodeSetName, checked.value));
  if (awaitNodesReady === false && readyTimeoutSeconds !== undefined)
    problems.push({
      path: "args.readyTimeoutSeconds",
      message: "is set, but awaitNodesReady is false: up does not wait for the nodes",
    });
  throwIfInvalid("NodeSet", name, problems);
  // Sandbox mode: Pulumi applied the disks itself, and no operator need run to make the set Ready.
  const awaited = awaitNodesReady ?? !agents;
  return {
    spec: (checked as { value: LVMNodeSetSpec }).value,
    nodeSetName: nodeSetName ?? name,
    namespace: namespace ?? DEFAULT_NAMESPACE,
    ...(awaited ? { readyTimeoutSeconds: readyTimeoutSeconds ?? DEFAULT_READY_TIMEOUT_SECONDS } : {}),
  };
}

/** defaultStorageClass needs a default device class that creates its StorageClass. */
function defaultClassProblems(spec: LVMNodeSetSpec): ValidationProblem[] {
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

function defaultNameProblems(name: string, nodeSetName: string | undefined): ValidationProblem[] {
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
