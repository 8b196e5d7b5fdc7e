import type { AgentService } from "../agent-service";
import {
  applyRequestSchema,
  errorResponseSchema,
  nodePlanSchema,
  operationResultSchema,
  planRequestSchema,
  statusResponseSchema,
  teardownRequestSchema,
} from "../../agent-api/schemas";
import { route, type Route } from "./route";

const errors = {
  400: { description: "Invalid JSON or body (field paths in error.problems).", schema: errorResponseSchema },
  401: { description: "No bearer token, or one the TokenReview rejects.", schema: errorResponseSchema },
  403: {
    description: "The SubjectAccessReview denies update on this node's LVMNode.",
    schema: errorResponseSchema,
  },
  413: { description: "Body over the size limit.", schema: errorResponseSchema },
  415: { description: "Body not application/json.", schema: errorResponseSchema },
  503: {
    description: "Credentials cannot be checked now, or the agent is stopping.",
    schema: errorResponseSchema,
  },
};

/** The authenticated API: inventory, plan, apply, teardown, status. */
export function v1Routes(service: AgentService): Route[] {
  return [
    route({
      method: "GET",
      path: "/v1/inventory",
      authenticated: true,
      summary: "This node's devices and LVM state, discovered now.",
      responses: { 200: { description: "NodeInventory (src/inventory/types.ts)" }, ...errors },
      handle: async () => ({ status: 200, json: await service.inventory() }),
    }),
    route({
      method: "POST",
      path: "/v1/plan",
      authenticated: true,
      body: planRequestSchema,
      summary: "Plan a spec against this node now: a dry run, nothing is written.",
      responses: {
        200: { description: "The plan; apply it with its hash.", schema: nodePlanSchema },
        ...errors,
      },
      handle: async (body) => ({ status: 200, json: await service.plan(body.spec) }),
    }),
    route({
      method: "POST",
      path: "/v1/apply",
      authenticated: true,
      body: applyRequestSchema,
      summary:
        "Execute the plan for a spec if it still has the hash the caller saw (or resumes the interrupted apply of that hash).",
      responses: {
        200: { description: "Every step, done or skipped.", schema: operationResultSchema },
        409: {
          description:
            "PlanChanged (error.plan is the fresh plan), OperationInProgress, DeviceChanged, StepRefused.",
          schema: errorResponseSchema,
        },
        500: {
          description: "A step failed: error.failedStep, error.command (argv, exitCode, stderr).",
          schema: errorResponseSchema,
        },
        ...errors,
      },
      handle: async (body) => ({ status: 200, json: await service.apply(body) }),
    }),
    route({
      method: "POST",
      path: "/v1/teardown",
      authenticated: true,
      body: teardownRequestSchema,
      summary:
        "Remove our thin pools, volume group(s) and PV labels; refused while other logical volumes exist unless forced.",
      responses: {
        200: { description: "Every step (or, with dryRun, {plan}).", schema: operationResultSchema },
        409: {
          description:
            "VolumeGroupInUse (error.volumes), VolumeGroupShared, PlanChanged, OperationInProgress.",
          schema: errorResponseSchema,
        },
        500: { description: "A step failed.", schema: errorResponseSchema },
        ...errors,
      },
      handle: async (body) => ({ status: 200, json: await service.teardown(body) }),
    }),
    route({
      method: "GET",
      path: "/v1/status",
      authenticated: true,
      summary: "The LVMNode status as this node sees it, and what the journal says happened last.",
      responses: { 200: { description: "status", schema: statusResponseSchema }, ...errors },
      handle: async () => ({ status: 200, json: await service.status() }),
    }),
  ];
}
