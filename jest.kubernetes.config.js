/**
 * The real Kubernetes provider under the real engine (test/pulumi/kubernetes-e2e.test.ts,
 * docs/testing-pulumi.md): pulumi-resource-kubernetes built from its source snapshot. Not part of
 * `npm test` yet (its cold build is ~30+ min and the test has not run green): `npm run test:kubernetes`.
 */
module.exports = {
  displayName: "kubernetes",
  testEnvironment: "node",
  transform: { "^.+\\.ts$": "ts-jest" },
  roots: ["<rootDir>/test/pulumi"],
  testMatch: ["**/kubernetes-e2e.test.ts"],
};
