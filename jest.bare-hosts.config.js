/**
 * The bare-hosts engine test (test/pulumi/bare-hosts.e2e.ts, docs/testing-pulumi.md): examples/bare-hosts
 * with the real engine and the real Command provider over SSH into the qemu guest. Not part of
 * `npm test` yet: test/setup.sh builds neither pulumi-resource-command (test/pulumi/install-command.sh)
 * nor installs openssh-server. Its file name does not end in .test.ts, so jest.config.js does not
 * pick it up; this config runs it alone.
 * `npm run test:bare-hosts`.
 */
module.exports = {
  displayName: "bare-hosts",
  testEnvironment: "node",
  transform: { "^.+\\.ts$": "ts-jest" },
  roots: ["<rootDir>/test/pulumi"],
  testMatch: ["**/bare-hosts.e2e.ts"],
};
