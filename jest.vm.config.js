/**
 * The real-kernel tier (test/vm, docs/testing.md): the node agent inside a qemu guest with
 * device-mapper (conformance.test.ts: thin pools, snapshots, pvmove, a reboot with the disks
 * reordered; smoke.test.ts), and the guest's own argument tests. In `npm test`: the host lane's
 * second run, after its unit and integration tests (test/run.sh), beside the cluster tier's node: two
 * guests one after the other, each on one core, that otherwise held the host lane's single jest
 * worker for ~280 s before the cluster tier could start. Alone: `npm run test:vm`.
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
