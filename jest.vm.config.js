/**
 * The real-kernel tier (test/vm, docs/testing.md): the node agent inside a qemu guest with
 * device-mapper (conformance.test.ts: thin pools, snapshots, pvmove, a reboot with the disks
 * reordered; smoke.test.ts), and the guest's own argument tests. In `npm test`: the guest lane's
 * first run (test/run.sh), beside the unit and integration tests and before the cluster tier, whose
 * emulated node starved beside it. Alone: `npm run test:vm`.
 */
module.exports = {
  displayName: "vm",
  testEnvironment: "node",
  transform: { "^.+\\.ts$": "ts-jest" },
  moduleNameMapper: { "^pulumi-lvm$": "<rootDir>/src/index.ts" },
  testTimeout: 30_000,
  roots: ["<rootDir>/test/vm"],
  testMatch: ["**/*.test.ts"],
};
