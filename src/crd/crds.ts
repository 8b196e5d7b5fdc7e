import type { z } from "zod";
import { API_GROUP, API_VERSION, lvmNodeSetSchema } from "../api/lvmnodeset";
import { lvmNodeSchema } from "../api/lvmnode";
import { customResourceSchema, type OpenAPISchema } from "./openapi";

/**
 * The CustomResourceDefinitions (apiextensions.k8s.io/v1) of lvm.topolvm.io/v2alpha1, built from the
 * zod schemas so the apiserver and our own validation agree. Both kinds are namespaced: an LVMNode is
 * owned by an LVMNodeSet, and owner references only work within one namespace.
 */
export interface CrdNames {
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
}

export interface PrinterColumn {
  readonly name: string;
  readonly type: "string" | "date" | "integer" | "number" | "boolean";
  readonly jsonPath: string;
  readonly description?: string;
}

export interface CustomResourceDefinition {
  readonly apiVersion: "apiextensions.k8s.io/v1";
  readonly kind: "CustomResourceDefinition";
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly group: string;
    readonly names: CrdNames & { readonly listKind: string; readonly categories: readonly string[] };
    readonly scope: "Namespaced";
    readonly versions: ReadonlyArray<{
      readonly name: string;
      readonly served: boolean;
      readonly storage: boolean;
      readonly schema: { readonly openAPIV3Schema: OpenAPISchema };
      readonly subresources: { readonly status: Record<string, never> };
      readonly additionalPrinterColumns: readonly PrinterColumn[];
    }>;
  };
}

/** `kubectl get lvm` lists both kinds. */
export const CATEGORIES = ["lvm"] as const;

const STATE: PrinterColumn = { name: "State", type: "string", jsonPath: ".status.state" };
const AGE: PrinterColumn = { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" };

export function lvmNodeSetCrd(): CustomResourceDefinition {
  return crd(
    lvmNodeSetSchema,
    { kind: "LVMNodeSet", plural: "lvmnodesets", singular: "lvmnodeset", shortNames: ["lvmns"] },
    [
      { name: "Desired", type: "integer", jsonPath: ".status.desiredNodes" },
      { name: "Ready", type: "integer", jsonPath: ".status.readyNodes" },
      { name: "Failed", type: "integer", jsonPath: ".status.failedNodes" },
      STATE,
      AGE,
    ],
  );
}

export function lvmNodeCrd(): CustomResourceDefinition {
  return crd(
    lvmNodeSchema,
    { kind: "LVMNode", plural: "lvmnodes", singular: "lvmnode", shortNames: ["lvmn"] },
    [
      STATE,
      { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
      {
        name: "VolumeGroupsHealthy",
        type: "string",
        jsonPath: '.status.conditions[?(@.type=="VolumeGroupsHealthy")].status',
      },
      { name: "Pending", type: "string", jsonPath: ".status.pendingApproval.hash" },
      AGE,
    ],
  );
}

/** Both CRDs, LVMNodeSet first. */
export function crds(): CustomResourceDefinition[] {
  return [lvmNodeSetCrd(), lvmNodeCrd()];
}

function crd(
  schema: z.ZodType,
  names: CrdNames,
  columns: readonly PrinterColumn[],
): CustomResourceDefinition {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${names.plural}.${API_GROUP}` },
    spec: {
      group: API_GROUP,
      names: { ...names, listKind: `${names.kind}List`, categories: [...CATEGORIES] },
      scope: "Namespaced",
      versions: [
        {
          name: API_VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: customResourceSchema(schema) },
          subresources: { status: {} },
          additionalPrinterColumns: columns,
        },
      ],
    },
  };
}
