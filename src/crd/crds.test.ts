import { API_RULES } from "../api/rules";
import { crds, lvmNodeCrd, lvmNodeSetCrd } from "./crds";
import { walkSchema, type OpenAPISchema } from "./openapi";

const schemaOf = (crd: ReturnType<typeof crds>[number]) => crd.spec.versions[0]!.schema.openAPIV3Schema;

describe("the CRDs", () => {
  test("LVMNodeSet: names, scope, version, subresource and columns", () => {
    const crd = lvmNodeSetCrd();
    expect(crd).toMatchObject({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "lvmnodesets.lvm.topolvm.io" },
      spec: {
        group: "lvm.topolvm.io",
        scope: "Namespaced",
        names: {
          kind: "LVMNodeSet",
          listKind: "LVMNodeSetList",
          plural: "lvmnodesets",
          singular: "lvmnodeset",
          shortNames: ["lvmns"],
          categories: ["lvm"],
        },
      },
    });
    expect(crd.spec.versions).toHaveLength(1);
    expect(crd.spec.versions[0]).toMatchObject({
      name: "v2alpha1",
      served: true,
      storage: true,
      subresources: { status: {} },
    });
    expect(crd.spec.versions[0]!.additionalPrinterColumns).toEqual([
      { name: "Desired", type: "integer", jsonPath: ".status.desiredNodes" },
      { name: "Ready", type: "integer", jsonPath: ".status.readyNodes" },
      { name: "Failed", type: "integer", jsonPath: ".status.failedNodes" },
      { name: "State", type: "string", jsonPath: ".status.state" },
      { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
    ]);
  });

  test("LVMNode: names, scope and columns", () => {
    const crd = lvmNodeCrd();
    expect(crd.metadata.name).toBe("lvmnodes.lvm.topolvm.io");
    expect(crd.spec.scope).toBe("Namespaced");
    expect(crd.spec.names).toEqual({
      kind: "LVMNode",
      listKind: "LVMNodeList",
      plural: "lvmnodes",
      singular: "lvmnode",
      shortNames: ["lvmn"],
      categories: ["lvm"],
    });
    expect(crd.spec.versions[0]!.additionalPrinterColumns.map((c) => [c.name, c.jsonPath])).toEqual([
      ["State", ".status.state"],
      ["Ready", '.status.conditions[?(@.type=="Ready")].status'],
      ["VolumeGroupsHealthy", '.status.conditions[?(@.type=="VolumeGroupsHealthy")].status'],
      ["Pending", ".status.pendingApproval.hash"],
      ["Age", ".metadata.creationTimestamp"],
    ]);
  });

  test("every printer column points at a field of the schema", () => {
    for (const crd of crds()) {
      const paths = new Set<string>();
      walkSchema(schemaOf(crd), (_n, p) => paths.add(`.${p}`));
      for (const c of crd.spec.versions[0]!.additionalPrinterColumns) {
        if (c.jsonPath === ".metadata.creationTimestamp") continue;
        const field = c.jsonPath.replace(/\[\?\(.*?\)\]/g, "[]");
        expect({ kind: crd.spec.names.kind, field, known: paths.has(field) }).toEqual({
          kind: crd.spec.names.kind,
          field,
          known: true,
        });
      }
    }
  });
});

describe.each(crds().map((c) => [c.spec.names.kind, c] as const))(
  "the %s schema is structural",
  (_kind, crd) => {
    const root = schemaOf(crd);
    const nodes: Array<[string, OpenAPISchema]> = [];
    walkSchema(root, (node, path) => nodes.push([path || "(root)", node]));

    test("every node has a type; none has $ref, anyOf, oneOf, allOf or not", () => {
      for (const [path, node] of nodes) {
        // the one exception structural schemas allow: a count or a percentage
        const type = node["x-kubernetes-int-or-string"] === true ? "string" : typeof node.type;
        expect({ path, type }).toEqual({ path, type: "string" });
        for (const key of ["$ref", "anyOf", "oneOf", "allOf", "not", "$schema"])
          expect({ path, key, has: key in node }).toEqual({ path, key, has: false });
      }
    });

    test("no node has both properties and additionalProperties, nor additionalProperties: false", () => {
      for (const [path, node] of nodes) {
        expect({ path, both: "properties" in node && "additionalProperties" in node }).toEqual({
          path,
          both: false,
        });
        expect({ path, value: node.additionalProperties === false }).toEqual({ path, value: false });
      }
    });

    test("metadata is only an object; apiVersion and kind are plain strings; spec is required", () => {
      const properties = root.properties as Record<string, OpenAPISchema>;
      expect(properties.metadata).toEqual({ type: "object" });
      expect(properties.apiVersion).toEqual({ type: "string", description: expect.any(String) });
      expect(properties.kind).toEqual({ type: "string", description: expect.any(String) });
      expect(root.required).toEqual(["spec"]);
    });

    test("every list is bounded (the apiserver costs CEL rules by it)", () => {
      for (const [path, node] of nodes)
        if (node.type === "array")
          expect({ path, maxItems: typeof node.maxItems }).toEqual({ path, maxItems: "number" });
    });

    test("every string under a CEL rule is bounded, except map values, which no rule reads", () => {
      const underCel: string[] = [];
      walkSchema(root, (node, path) => {
        if (node["x-kubernetes-validations"]) underCel.push(path);
      });
      expect(underCel.length).toBeGreaterThan(0);
      for (const [path, node] of nodes) {
        const covered = underCel.some(
          (p) => path === p || path.startsWith(`${p}.`) || path.startsWith(`${p}[`),
        );
        if (!covered || node.type !== "string" || path.endsWith(".*")) continue;
        const bounded = typeof node.maxLength === "number" || Array.isArray(node.enum);
        expect({ path, bounded }).toEqual({ path, bounded: true });
      }
    });

    test("list map keys are required fields of the items", () => {
      for (const [path, node] of nodes) {
        const keys = node["x-kubernetes-list-map-keys"] as string[] | undefined;
        if (!keys) continue;
        expect({ path, required: (node.items as OpenAPISchema).required }).toEqual({
          path,
          required: expect.arrayContaining(keys),
        });
      }
    });

    test("descriptions keep their @default and @example tags for kubectl explain", () => {
      const described = nodes.map(([, n]) => n.description).filter((d): d is string => typeof d === "string");
      expect(described.some((d) => d.includes("@default"))).toBe(true);
    });
  },
);

test("every CEL rule in the CRDs is a rule of API_RULES, and every CEL rule of API_RULES is in the CRDs", () => {
  const inCrds = new Set<string>();
  for (const crd of crds())
    walkSchema(schemaOf(crd), (node) => {
      for (const v of (node["x-kubernetes-validations"] as Array<{ message: string }> | undefined) ?? [])
        inCrds.add(v.message);
    });
  const inRules = new Set(API_RULES.flatMap((r) => ("cel" in r ? [r.cel] : [])));
  expect([...inCrds].sort()).toEqual([...inRules].sort());
});
