/**
 * The body of every error answer: a stable machine-readable code, a message, and the details a
 * caller needs (field problems, the fresh plan, the volumes in the way, the failed command).
 * errorResponseSchema (schemas.ts) reads it back.
 */
export function errorResponse(
  code: string,
  message: string,
  details: Readonly<Record<string, unknown>> = {},
): { error: { code: string; message: string } & Record<string, unknown> } {
  return { error: { code, message, ...details } };
}
