/**
 * The real-cluster tier (test/cluster, docs/testing-cluster.md): a kubelet + containerd node in the
 * qemu guest, TopoLVM from source. Not in `npm test` (docs/testing-cluster.md says why):
 * `npm run test:cluster` builds what is missing (test/cluster/install.sh) and runs all of test/cluster.
 */
module.exports = {
  displayName: "cluster",
  testEnvironment: "node",
  transform: { "^.+\\.ts$": "ts-jest" },
  roots: ["<rootDir>/test/cluster"],
  testMatch: ["**/*.test.ts"],
};
