import * as path from "node:path";
import { Analyzer } from "@pulumi/pulumi/provider/experimental/analyzer";

/**
 * The components' args and outputs must be something Pulumi's schema inference (the analyzer
 * behind `pulumi package add` for TypeScript components) accepts: no unions, no `readonly T[]`, no
 * anonymous object types, no references to our own component classes. This runs the real analyzer
 * over the package, so a change that would break other-language consumers fails here.
 */
describe("Pulumi schema inference", () => {
  const repo = path.resolve(__dirname, "../..");
  const components = ["LvmSystem", "NodeSet", "VolumeGroup", "DeviceClass"];
  let result: ReturnType<Analyzer["analyze"]>;

  beforeAll(() => {
    result = new Analyzer(
      repo,
      "pulumi-lvm",
      { name: "pulumi-lvm", main: "src/index.ts" },
      new Set(components),
    ).analyze();
  }, 120_000);

  test("infers every component from the package entry point", () => {
    expect(Object.keys(result.components).sort()).toEqual([...components].sort());
  });

  test("args and outputs as declared", () => {
    expect(Object.keys(result.components.NodeSet!.inputs)).toEqual([
      "nodeSetName",
      "namespace",
      "labels",
      "defaultStorageClass",
      "nodeSelector",
      "template",
      "agents",
      "cluster",
      "approvals",
      "awaitNodesReady",
      "readyTimeoutSeconds",
    ]);
    // From every language: a map of node name → hash, each hash an Input (another stack's output).
    expect(result.components.NodeSet!.inputs.approvals).toMatchObject({
      type: "object",
      additionalProperties: { type: "string" },
      optional: true,
    });
    expect(result.components.NodeSet!.inputs.approvals!.additionalProperties!.plain).toBeUndefined();
    expect(result.components.NodeSet!.inputs.cluster).toMatchObject({
      $ref: "#/types/pulumi-lvm:index:ClusterMode",
      optional: true,
    });
    expect(Object.keys(result.components.NodeSet!.outputs)).toEqual([
      "nodeSetName",
      "namespace",
      "storageClassNames",
      "snapshotClassNames",
      "nodes",
    ]);
    expect(result.components.NodeSet!.inputs.template).toMatchObject({
      $ref: "#/types/pulumi-lvm:index:NodeSetTemplate",
      plain: true,
    });
    // An Input since agentImage may be a built image's Output (issue #13): no longer plain.
    expect(result.components.LvmSystem!.inputs.agentImage).toMatchObject({ type: "string" });
    expect(result.components.LvmSystem!.inputs.agentImage!.plain).toBeUndefined();
    expect(result.components.LvmSystem!.inputs.topolvm).toMatchObject({
      $ref: "#/types/pulumi-lvm:index:TopolvmSettings",
      optional: true,
    });
    expect(result.components.DeviceClass!.outputs.storageClassName).toMatchObject({
      type: "string",
      optional: true,
    });
    expect(result.typeDefinitions.ThinPoolSpec!.properties!.sizePercent).toMatchObject({
      type: "number",
      plain: true,
    });
  });

  test("no type is named …Args: other languages' generators add that suffix themselves (Python: NodeSetTemplateArgs, not TemplateArgsArgs)", () => {
    const names = Object.keys(result.typeDefinitions);
    expect(names.filter((n) => n.endsWith("Args"))).toEqual([]);
    expect(names).toEqual(expect.arrayContaining(["NodeSetTemplate", "VolumeGroupSpec", "DeviceClassSpec"]));
  });

  test("every description is text (a {@link} in a doc comment would come out as [object Object])", () => {
    expect(JSON.stringify(result)).not.toContain("[object Object]");
  });
});
