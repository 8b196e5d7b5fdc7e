import { z } from "zod";

/**
 * The parts of ObjectMeta we read. Everything else the API server adds (uid, resourceVersion,
 * managedFields, ...) passes through untouched, so objects round-trip.
 */
export const objectMetaSchema = z.looseObject({
  name: z
    .string()
    .max(253)
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, {
      error: "must be a DNS-1123 subdomain (lowercase, digits, '-' and '.')",
    }),
  namespace: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

export type ObjectMeta = z.infer<typeof objectMetaSchema>;
