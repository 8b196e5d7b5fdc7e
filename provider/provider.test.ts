import { createRequire } from "node:module";
import * as pulumi from "@pulumi/pulumi";
import { nodeSetDisksProvider, RUNTIME_VERSION } from "./provider";

/**
 * What Pulumi stores with every NodeSetDisks resource is the serialized provider object. It must
 * hold only the runtime version and the code that finds the runtime at call time, so that an old
 * state keeps working after the package is upgraded.
 */
describe("the serialized provider", () => {
  let text: string;
  beforeAll(async () => {
    text = (await pulumi.runtime.serializeFunction(() => nodeSetDisksProvider, { allowSecrets: true })).text;
  });

  test("captures the runtime version and no runtime logic", () => {
    expect(RUNTIME_VERSION).toBe("v1");
    expect(text).toContain('VERSION: "v1"');
    for (const logic of ["/v1/apply", "/v1/plan", "summarizePlan", "deletionPolicy", "zod"])
      expect(text).not.toContain(logic);
    expect(text.length).toBeLessThan(6000);
  });

  test("loads provider/runtime/v1 when a method is called, the way the engine's provider process runs it", async () => {
    // Evaluate the stored text as the dynamic-provider host does: a module with Node's own require.
    const module = { exports: {} as { handler: () => pulumi.dynamic.ResourceProvider } };
    new Function("exports", "require", "module", text)(module.exports, createRequire(__filename), module);
    const provider = module.exports.handler();
    const inputs = { nodeSetName: "edge", namespace: "lvm-system", spec: {}, agents: {} };
    // diff is pure: it proves the runtime module was found and loaded without calling any agent.
    await expect(
      provider.diff!("lvm-system/edge", inputs, { ...inputs, nodeSetName: "edge-2" }),
    ).resolves.toEqual({
      changes: true,
      replaces: [],
      deleteBeforeReplace: false,
    });
  });
});
