/** Unit tests live beside the code (src/, provider/); tests that start real processes live in test/. */
// ts-jest transpiles each file alone because tsconfig sets isolatedModules; `npm run build` type-checks.
const transform = { "^.+\\.ts$": "ts-jest" };
// The examples import "pulumi-lvm" as a user's program does (examples/node_modules/pulumi-lvm links
// the repository, whose main is the compiled dist/); tests that run them in-process get the sources.
const moduleNameMapper = { "^pulumi-lvm$": "<rootDir>/src/index.ts" };
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
      moduleNameMapper,
      roots: ["<rootDir>/src", "<rootDir>/provider", "<rootDir>/deploy"],
      testMatch: ["**/*.test.ts"],
    },
    {
      displayName: "integration",
      testEnvironment: "node",
      transform,
      moduleNameMapper,
      roots: ["<rootDir>/test"],
      testMatch: ["**/*.test.ts"],
      // The Kubernetes provider's tier (jest.kubernetes.config.js) runs after the host lane's tests, once
      // test/setup-late.sh has built its plugin, and the real-kernel tier (jest.vm.config.js) beside the
      // cluster tier (test/run.sh). The cluster tier is the next project.
      testPathIgnorePatterns: [
        "/node_modules/",
        "<rootDir>/test/cluster/",
        "<rootDir>/test/vm/",
        "<rootDir>/test/pulumi/kubernetes-e2e.test.ts",
        "<rootDir>/test/pulumi/component-provider.test.ts",
        "<rootDir>/test/pulumi/python-lvm-system.test.ts",
        "<rootDir>/test/pulumi/crd-adoption.test.ts",
        "<rootDir>/test/pulumi/approvals-e2e.test.ts",
      ],
    },
    {
      // The real-cluster tier (docs/testing-cluster.md): one cluster boot for the agent DaemonSet,
      // TopoLVM, PVCs, snapshots, expansion, overcommit, the capacity refusal and csi-sanity's
      // focused subset (topolvm.test.ts), and the kubelet proxy's and the exec client's own tests.
      // node.test.ts boots a second cluster for nothing topolvm.test.ts does not also show: it stays
      // with `npm run test:cluster`.
      displayName: "cluster",
      testEnvironment: "node",
      transform,
      moduleNameMapper,
      roots: ["<rootDir>/test/cluster"],
      testMatch: [
        "<rootDir>/test/cluster/topolvm.test.ts",
        "<rootDir>/test/cluster/kubelet-proxy.test.ts",
        "<rootDir>/test/cluster/pod-exec.test.ts",
        "<rootDir>/test/cluster/boot-retry.test.ts",
      ],
    },
  ],
};
