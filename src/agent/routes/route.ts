import type { z } from "zod";

/** What a handler answers: JSON, or text with its content type. */
export type Reply =
  | { readonly status: number; readonly json: unknown; readonly headers?: Readonly<Record<string, string>> }
  | { readonly status: number; readonly text: string; readonly contentType: string };

/** One endpoint of the agent's API. */
export interface Route<B = unknown> {
  readonly method: "GET" | "POST";
  readonly path: string;
  /** Needs a bearer token that passes TokenReview and SubjectAccessReview. */
  readonly authenticated: boolean;
  /** The request body's schema (POST); the body is read and validated only after authentication. */
  readonly body?: z.ZodType<B>;
  /** One line for docs/agent-openapi.json. */
  readonly summary: string;
  /** Response schemas by status code, for the OpenAPI document. */
  readonly responses: Readonly<Record<number, { readonly description: string; readonly schema?: z.ZodType }>>;
  handle(body: B): Promise<Reply>;
}

/** Keeps a route's body type while collecting routes of different body types in one list. */
export function route<B>(r: Route<B>): Route<unknown> {
  return r as Route<unknown>;
}
