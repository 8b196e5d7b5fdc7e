import * as path from "node:path";
import { requireFreshBuild } from "../pulumi/component-package";
import { registeredTypes, runUnderPulumiHost } from "./pulumi-host";

/**
 * Each example loads the way `pulumi up` loads it: the Pulumi Node.js host's TypeScript setup
 * (@pulumi/pulumi's tsutils: its vendored ts-node with the project's typescript, type-checking, the
 * tsconfig.json of the program's directory), run in a fresh node process with the program's
 * directory as working directory, against Pulumi's mocks (the Pulumi CLI cannot be installed here).
 * A type error or a missing module in an example fails here, as it would fail `pulumi up`.
 */
const repo = path.resolve(__dirname, "../..");

// The examples import "pulumi-lvm": here the repository itself (examples/node_modules/pulumi-lvm),
// whose main is the compiled dist/, so it must be built from these sources.
beforeAll(() => requireFreshBuild(repo));

/** The config each example requires (the quickstart: its disk list). */
const REQUIRED: Record<string, Record<string, string>> = {
  "examples/quickstart": { "project:diskSerials": JSON.stringify(["SN-AAA111", "SN-BBB222"]) },
};

describe.each([
  ["examples/quickstart", "pulumi-lvm:index:NodeSet"],
  ["examples/multi-nodeset", "pulumi-lvm:index:NodeSet"],
  ["examples/org-component", "acme:storage:EdgeStorage"],
])("%s", (dir, component) => {
  test("type-checks and runs under the Pulumi Node.js host's ts-node", () => {
    const r = runUnderPulumiHost(path.join(repo, dir), REQUIRED[dir]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const types = registeredTypes(r.stdout);
    expect(types).toContain("pulumi-lvm:index:LvmSystem");
    expect(types).toContain(component);
  }, 240_000);
});

test("examples/bare-hosts type-checks and runs under the Pulumi Node.js host's ts-node", () => {
  const r = runUnderPulumiHost(path.join(repo, "examples/bare-hosts"), {
    "project:sshPrivateKey":
      "-----BEGIN OPENSSH PRIVATE KEY-----\nexample\n-----END OPENSSH PRIVATE KEY-----",
    // Any readable file stands in for the bundle (only its hash is used here).
    "project:agentBundle": "package.json",
  });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  const types = registeredTypes(r.stdout);
  expect(types.filter((t) => t === "pulumi-lvm:index:AgentHost")).toHaveLength(3);
  expect(types).toContain("command:remote:Command");
  expect(types).toContain("pulumi-nodejs:dynamic/pulumi-lvm:NodeSetDisks");
}, 240_000);
