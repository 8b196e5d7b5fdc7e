/**
 * The user's journey end to end (test/journey, issue 16): the cluster tier's node with the
 * quickstart's disks, `pulumi preview` and `up` of examples/quickstart with the real engine and the
 * real Kubernetes provider, a StatefulSet's PVC bound on the thin pool. The last tier of `npm test`
 * (test/run.sh); alone: `npm run test:journey` (it builds what test:cluster and test:kubernetes need
 * first: test/setup-late.sh).
 */
module.exports = {
  displayName: "journey",
  testEnvironment: "node",
  transform: { "^.+\\.ts$": "ts-jest" },
  roots: ["<rootDir>/test/journey"],
  testMatch: ["**/*.journey.ts"],
};
