/**
 * The real-cluster tier (test/cluster, docs/testing-cluster.md): a kubelet + containerd node in the
 * qemu guest, TopoLVM from source. Not part of `npm test` yet: `npm run test:cluster`, after
 * `bash test/env/install.sh kubelet kube-scheduler && bash test/cluster/install.sh`.
 */
module.exports = {
  displayName: "cluster",
  testEnvironment: "node",
  transform: { "^.+\\.ts$": "ts-jest" },
  roots: ["<rootDir>/test/cluster"],
  testMatch: ["**/*.test.ts"],
};
