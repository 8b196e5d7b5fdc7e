import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import {
  find,
  installMocks,
  runProgramDirectory,
  type Recorded,
} from "../../../test/support/components/pulumi-mocks";

/** examples/quickstart with sandbox config: Pulumi plans and applies through the node's agent. */
const program = path.resolve(__dirname, "../../../examples/quickstart");

let recorded: Recorded[];
beforeAll(async () => {
  await installMocks();
  pulumi.runtime.setAllConfig(
    {
      "project:diskSerials": JSON.stringify(["SN-AAA111", "SN-BBB222"]),
      "project:agentUrl": "http://127.0.0.1:8080",
      "project:node": "edge-1",
      "project:agentToken": "token-of-edge-1-000000",
    },
    ["project:agentToken"],
  );
  ({ recorded } = await runProgramDirectory(program));
});

test("adds NodeSetDisks for the configured node, the token kept secret", async () => {
  const disks = find(recorded, "pulumi-nodejs:dynamic/pulumi-lvm:NodeSetDisks", "quickstart-disks");
  expect(disks.parent).toEqual({ type: "pulumi-lvm:index:NodeSet", name: "quickstart" });
  expect(disks.inputs.agents).toEqual({
    [pulumi.runtime.specialSigKey]: pulumi.runtime.specialSecretSig,
    value: { "edge-1": { url: "http://127.0.0.1:8080", token: "token-of-edge-1-000000" } },
  });
  expect(disks.inputs.spec.deviceClasses.map((dc: { name: string }) => dc.name)).toEqual(["thin"]);
  expect(await pulumi.isSecret(disks.props.agents["edge-1"].token)).toBe(true);
});
