/**
 * The bare-hosts engine test (test/pulumi/bare-hosts.e2e.ts, docs/testing-pulumi.md): examples/bare-hosts
 * with the real engine and the real Command provider over SSH into the qemu guest. In `npm test`: the
 * host lane's second tier (test/run.sh), once test/setup-late.sh has built pulumi-resource-command
 * (test/setup.sh installs openssh-server). Its file name does not end in .test.ts, so jest.config.js
 * does not pick it up; this config runs it. Alone: `npm run test:bare-hosts`.
 */
module.exports = {
  displayName: "bare-hosts",
  testEnvironment: "node",
  transform: { "^.+\\.ts$": "ts-jest" },
  roots: ["<rootDir>/test/pulumi"],
  testMatch: ["**/bare-hosts.e2e.ts"],
};
