/**
 * Engine-tier tests that need pulumi-resource-kubernetes, built from its source snapshot
 * (docs/testing-pulumi.md): the real Kubernetes provider (kubernetes-e2e.test.ts) and our package as
 * a component provider used from Python (component-provider.test.ts, docs/languages.md). Not part of
 * `npm test` yet: the plugin's cold build is ~30+ min and neither file has run green.
 * `npm run test:kubernetes`.
 */
module.exports = {
  displayName: "kubernetes",
  testEnvironment: "node",
  transform: { "^.+\\.ts$": "ts-jest" },
  roots: ["<rootDir>/test/pulumi"],
  testMatch: ["**/kubernetes-e2e.test.ts", "**/component-provider.test.ts"],
};
