import { errorResponse } from "../agent-api/errors";

/**
 * Errors the agent answers with: each carries its HTTP status, a stable machine-readable code and
 * the details a caller needs (field paths, the fresh plan, the volumes in the way, the failed
 * command with exit code and stderr).
 */
export class AgentError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = "AgentError";
  }
}

/** The body every error response has. */
export function errorBody(e: AgentError): ReturnType<typeof errorResponse> {
  return errorResponse(e.code, e.message, e.details);
}
