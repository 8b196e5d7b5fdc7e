import * as fs from "node:fs";
import { buildOpenApiDocument, documentedRoutes, OPENAPI_FILE } from "./openapi";

describe("the OpenAPI document", () => {
  it("is checked in and current (regenerate: npx tsx src/agent/openapi.ts --write)", () => {
    expect(JSON.parse(fs.readFileSync(OPENAPI_FILE, "utf8"))).toEqual(buildOpenApiDocument());
  });

  it("documents every route, with bearer security on exactly the /v1 ones", () => {
    const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, { security: unknown[] }>> };
    for (const r of documentedRoutes()) {
      const op = doc.paths[r.path]?.[r.method.toLowerCase()];
      expect(op).toBeDefined();
      expect(op!.security.length > 0).toBe(r.path.startsWith("/v1/"));
    }
  });

  it("describes request bodies with the validating schemas: strict, with the spec by reference", () => {
    const doc = buildOpenApiDocument() as { components: { schemas: Record<string, any> } }; // eslint-disable-line @typescript-eslint/no-explicit-any -- parsed JSON, checked field by field
    const apply = doc.components.schemas.ApplyRequest;
    expect(apply.additionalProperties).toBe(false);
    expect(apply.required).toEqual(["spec", "planHash"]);
    expect(apply.properties.spec).toEqual({ $ref: "#/components/schemas/LVMNodeSpec" });
    expect(doc.components.schemas.LVMNodeSpec.properties.volumeGroups).toBeDefined();
  });
});
