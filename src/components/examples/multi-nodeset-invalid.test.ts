import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { installMocks } from "../../../test/support/components/pulumi-mocks";

/** examples/multi-nodeset with bad config. */
const program = path.resolve(__dirname, "../../../examples/multi-nodeset");

beforeAll(async () => {
  await installMocks();
  pulumi.runtime.setAllConfig({ "project:agentImage": "" });
});

test("an empty agent image stops the program before anything registers", () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loading the module is running the program
  expect(() => require(program)).toThrow(
    /^LvmSystem "lvm" is invalid:\n {2}args\.agentImage: must not be empty$/,
  );
});
