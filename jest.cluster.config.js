/**
 * The real-cluster tier (test/cluster, docs/testing-cluster.md): a kubelet + containerd node in the
 * qemu guest, TopoLVM from source. `npm test` runs its CI files (jest.config.js, project "cluster");
 * `npm run test:cluster` runs all of test/cluster, node.test.ts included.
 */
module.exports = {
  displayName: "cluster",
  testEnvironment: "node",
  transform: { "^.+\\.ts$": "ts-jest" },
  roots: ["<rootDir>/test/cluster"],
  testMatch: ["**/*.test.ts"],
};
