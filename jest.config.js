/** Unit tests live beside the code (src/, provider/); tests that start real processes live in test/. */
// ts-jest transpiles each file alone because tsconfig sets isolatedModules; `npm run build` type-checks.
const transform = { "^.+\\.ts$": "ts-jest" };
module.exports = {
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
      // npm run test:cluster (jest.cluster.config.js) and npm run test:kubernetes (jest.kubernetes.config.js).
      testPathIgnorePatterns: [
        "/node_modules/",
        "<rootDir>/test/cluster/",
        "<rootDir>/test/pulumi/kubernetes-e2e.test.ts",
        "<rootDir>/test/pulumi/component-provider.test.ts",
      ],
    },
  ],
};
