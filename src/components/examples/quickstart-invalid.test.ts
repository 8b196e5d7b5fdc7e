import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { ValidationError } from "../../api";
import { installMocks } from "../../../test/support/components/pulumi-mocks";

/** examples/quickstart with bad config: the program stops with every problem, named by its path. */
const program = path.resolve(__dirname, "../../../examples/quickstart");

beforeAll(async () => {
  await installMocks();
  pulumi.runtime.setAllConfig(
    {
      "project:diskSerials": "[]",
      "project:agentUrl": "ftp://node-1:8080",
      "project:agentToken": "token-of-node-1-000000",
    },
    ["project:agentToken"],
  );
});

test("no disk list: the program stops before anything is declared, naming the config key", () => {
  pulumi.runtime.setAllConfig({});
  jest.isolateModules(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loading the module is running the program
    expect(() => require(program)).toThrow(/Missing required configuration variable 'project:diskSerials'/);
  });
  pulumi.runtime.setAllConfig(
    {
      "project:diskSerials": "[]",
      "project:agentUrl": "ftp://node-1:8080",
      "project:agentToken": "token-of-node-1-000000",
    },
    ["project:agentToken"],
  );
});

test("an empty serial list and a non-HTTP agent URL", () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loading the module is running the program
  expect(() => require(program)).toThrow(
    new ValidationError('NodeSet "quickstart"', [
      {
        path: "args.agents.node-1.url",
        message: 'must be an http:// or https:// URL (got "ftp://node-1:8080")',
      },
      {
        path: "args.template.volumeGroups[0].deviceSelector.deviceSelectorTerms[0].matchExpressions[0].values",
        message: "In needs at least one value",
      },
    ]),
  );
});
