/**
 * Engine-tier tests that need pulumi-resource-kubernetes, built from its source snapshot
 * (docs/testing-pulumi.md): the real Kubernetes provider (kubernetes-e2e.test.ts) and our package as
 * a component provider used from Python (component-provider.test.ts, docs/languages.md; it needs
 * pulumi-resource-command too), and an LvmSystem and a cluster-mode NodeSet applied from Python
 * (python-lvm-system.test.ts), and our CRDs kept by a destroy, adopted by the next install and
 * upgraded (crd-adoption.test.ts), and a NodeSet's approvals through the real provider to a real
 * operator and agent (approvals-e2e.test.ts). In `npm test`: the host lane's last tier (test/run.sh), once
 * test/setup-late.sh has built the plugin. Alone: `npm run test:kubernetes`.
 */
module.exports = {
  displayName: "kubernetes",
  testEnvironment: "node",
  transform: { "^.+\\.ts$": "ts-jest" },
  roots: ["<rootDir>/test/pulumi"],
  testMatch: [
    "**/kubernetes-e2e.test.ts",
    "**/component-provider.test.ts",
    "**/python-lvm-system.test.ts",
    "**/crd-adoption.test.ts",
    "**/approvals-e2e.test.ts",
  ],
};
