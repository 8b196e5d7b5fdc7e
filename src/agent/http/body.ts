import type { IncomingMessage } from "node:http";
import type { z } from "zod";
import { problemsFrom } from "../../api";
import { AgentError } from "../errors";
import { duplicateKeyPath } from "./duplicate-keys";

/** @default 1 MiB */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * Reads a JSON request body and validates it with `schema`. Refuses before buffering: a declared
 * Content-Length over the limit is refused without reading a byte, a body that grows past it stops
 * being read at the limit (413). Not JSON (415 for another content type, 400 for bad JSON) and
 * schema problems (400, every problem with its field path) are refused too.
 */
export async function readJsonBody<T>(
  req: IncomingMessage,
  schema: z.ZodType<T>,
  limit = DEFAULT_BODY_LIMIT,
): Promise<T> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json")
    throw new AgentError(
      415,
      "UnsupportedMediaType",
      `the body must be application/json (got ${JSON.stringify(type || "nothing")})`,
    );
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
  const text = await readLimited(req, limit);
  if (!text.trim()) throw new AgentError(400, "InvalidJson", "the body is empty; expected a JSON object");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new AgentError(400, "InvalidJson", `the body is not valid JSON: ${(e as Error).message}`);
  }
  const duplicate = duplicateKeyPath(text);
  if (duplicate !== undefined)
    throw new AgentError(
      400,
      "InvalidJson",
      `the body names the key ${duplicate || "(root)"} twice; JSON.parse would silently keep the last`,
    );
  const r = schema.safeParse(value, { reportInput: true });
  if (!r.success) {
    const problems = problemsFrom(r.error);
    throw new AgentError(
      400,
      "InvalidBody",
      `the body is invalid:\n${problems.map((p) => `  ${p.path}: ${p.message}`).join("\n")}`,
      { problems },
    );
  }
  return r.data;
}

function tooLarge(limit: number): AgentError {
  return new AgentError(413, "BodyTooLarge", `the body is larger than ${limit} bytes`);
}

function readLimited(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off("data", onData);
        req.pause();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
