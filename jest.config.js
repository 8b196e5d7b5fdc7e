/** Unit tests live beside the code (src/, provider/); tests that start real processes live in test/. */
// ts-jest transpiles each file alone because tsconfig sets isolatedModules; `npm run build` type-checks.
const transform = { "^.+\\.ts$": "ts-jest" };
module.exports = {
  // Each LvmSystem built under mocks generates its agents' CA and serving key (two RSA keys,
  // src/components/agent-certificates.ts): about a second each on a loaded 2-core machine, so the
  // 5 s default is too tight for a beforeAll that builds a whole example program. Tests that start
  // real processes set their own, longer timeouts.
  testTimeout: 30_000,
  projects: [
    {
      displayName: "unit",
      testEnvironment: "node",
      transform,
      roots: ["<rootDir>/src", "<rootDir>/provider", "<rootDir>/deploy"],
      testMatch: ["**/*.test.ts"],
    },
    {
      displayName: "integration",
      testEnvironment: "node",
      transform,
      roots: ["<rootDir>/test"],
      testMatch: ["**/*.test.ts"],
      // Tiers whose binaries test/setup.sh does not build yet have their own commands:
      // npm run test:kubernetes (jest.kubernetes.config.js) and npm run test:cluster (jest.cluster.config.js).
      testPathIgnorePatterns: [
        "/node_modules/",
        "<rootDir>/test/cluster/",
        "<rootDir>/test/pulumi/kubernetes-e2e.test.ts",
        "<rootDir>/test/pulumi/component-provider.test.ts",
      ],
    },
  ],
};
