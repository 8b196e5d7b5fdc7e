import * as fs from "node:fs";
import * as path from "node:path";
import { z } from "zod";
import type { AgentService } from "./agent-service";
import { healthRoutes } from "./routes/health";
import { agentSpecSchema } from "../agent-api/schemas";
import { metricsRoute } from "./routes/metrics";
import { route, type Route } from "./routes/route";
import { v1Routes } from "./routes/v1";

/** Where the checked-in copy lives; a test checks it is current. Regenerate: `npx tsx src/agent/openapi.ts --write`. */
export const OPENAPI_FILE = path.join(__dirname, "..", "..", "docs", "agent-openapi.json");

/**
 * The OpenAPI 3.1 document of the agent's API, generated from the routes and the same zod schemas
 * that validate the bodies.
 */
export function buildOpenApiDocument(routes: readonly Route[] = documentedRoutes()): Record<string, unknown> {
  const registry = z.registry<{ id: string }>();
  registry.add(agentSpecSchema, { id: "LVMNodeSpec" });
  const ref = (schema: z.ZodType): Record<string, unknown> => {
    const id = (schema.meta() as { id?: string } | undefined)?.id;
    if (!id) return toSchema(schema);
    if (!registry.has(schema)) registry.add(schema, { id });
    return { $ref: `#/components/schemas/${id}` };
  };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const responses: Record<string, unknown> = {};
    for (const [code, res] of Object.entries(r.responses))
      responses[code] = {
        description: res.description,
        ...(res.schema ? { content: { "application/json": { schema: ref(res.schema) } } } : {}),
      };
    paths[r.path] = {
      ...paths[r.path],
      [r.method.toLowerCase()]: {
        summary: r.summary,
        ...(r.authenticated ? { security: [{ bearer: [] }, { proxyBearer: [] }] } : { security: [] }),
        ...(r.body
          ? { requestBody: { required: true, content: { "application/json": { schema: ref(r.body) } } } }
          : {}),
        responses,
      },
    };
  }
  const { schemas } = z.toJSONSchema(registry, {
    uri: (id) => `#/components/schemas/${id}`,
    unrepresentable: "any",
    io: "input",
  });
  for (const s of Object.values(schemas)) {
    delete (s as Record<string, unknown>).$schema;
    delete (s as Record<string, unknown>).$id;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "pulumi-lvm node agent",
      version: "v1",
      description:
        "The per-node agent: inventory, dry-run plans, applies with the plan hash the caller saw, teardown, status. Every /v1 call needs a bearer token that passes a TokenReview (audience-bound) and a SubjectAccessReview for update on lvmnodes.lvm.topolvm.io/<node>. See docs/agent.md.",
    },
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer" },
        proxyBearer: {
          type: "apiKey",
          in: "header",
          name: "X-Pulumi-Lvm-Authorization",
          description:
            "`Bearer <token>`, checked like Authorization and used only when Authorization is absent: the API server's pod proxy removes Authorization (it carried the caller's own credentials).",
        },
      },
      schemas,
    },
    paths,
  };
}

/** Every route, for the document; handlers are never called. */
export function documentedRoutes(): Route[] {
  const noService = new Proxy({} as AgentService, {
    get: () => {
      throw new Error("documentation only");
    },
  });
  return [
    ...healthRoutes({ notReady: () => undefined }),
    metricsRoute(noService),
    openApiRoute({}),
    ...v1Routes(noService),
  ];
}

/** `/openapi.json`; no auth. */
export function openApiRoute(document: Record<string, unknown>): Route {
  return route({
    method: "GET",
    path: "/openapi.json",
    authenticated: false,
    summary: "This document.",
    responses: { 200: { description: "OpenAPI 3.1" } },
    handle: async () => ({ status: 200, json: document }),
  });
}

/* ------------------------------------------------------------------------------ helpers ---- */

function toSchema(schema: z.ZodType): Record<string, unknown> {
  const s = z.toJSONSchema(schema, { unrepresentable: "any", io: "input" }) as Record<string, unknown>;
  delete s.$schema;
  return s;
}

/** `--write`: docs/agent-openapi.json, formatted by prettier with the repository's settings; else print it. */
async function generate(): Promise<void> {
  const prettier = await import("prettier");
  const options = (await prettier.resolveConfig(OPENAPI_FILE)) ?? {};
  const text = await prettier.format(JSON.stringify(buildOpenApiDocument()), { ...options, parser: "json" });
  if (!process.argv.includes("--write")) return void process.stdout.write(text);
  fs.writeFileSync(OPENAPI_FILE, text);
  console.log(`wrote ${path.relative(process.cwd(), OPENAPI_FILE)}`);
}

if (require.main === module) void generate();
