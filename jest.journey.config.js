/**
 * The user's journey end to end (test/journey, issue 16): the cluster tier's node with the
 * quickstart's disks, `pulumi preview` and `up` of examples/quickstart with the real engine and the
 * real Kubernetes provider, a StatefulSet's PVC bound on the thin pool. Not part of `npm test`:
 * `npm run test:journey` (the lead decides CI inclusion). Needs what test:cluster and
 * test:kubernetes need (docs/testing-cluster.md, docs/testing-pulumi.md).
 */
module.exports = {
  displayName: "journey",
  testEnvironment: "node",
  transform: { "^.+\\.ts$": "ts-jest" },
  roots: ["<rootDir>/test/journey"],
  testMatch: ["**/*.journey.ts"],
};
