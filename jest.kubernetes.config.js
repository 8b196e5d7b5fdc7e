/**
 * Engine-tier tests that need pulumi-resource-kubernetes, built from its source snapshot
 * (docs/testing-pulumi.md): the real Kubernetes provider (kubernetes-e2e.test.ts) and our package as
 * a component provider used from Python (component-provider.test.ts, docs/languages.md; it needs
 * pulumi-resource-command too), and an LvmSystem and a cluster-mode NodeSet applied from Python
 * (python-lvm-system.test.ts). All three have run green by hand (component-provider.test.ts last on
 * 2026-11-26, 10/10; python-lvm-system.test.ts on 2026-11-26, 6/6). Not part of `npm test` yet:
 * test/setup.sh does not build the plugin, whose cold build is not measured on an idle machine.
 * `npm run test:kubernetes`.
 */
module.exports = {
  displayName: "kubernetes",
  testEnvironment: "node",
  transform: { "^.+\\.ts$": "ts-jest" },
  roots: ["<rootDir>/test/pulumi"],
  testMatch: ["**/kubernetes-e2e.test.ts", "**/component-provider.test.ts", "**/python-lvm-system.test.ts"],
};
