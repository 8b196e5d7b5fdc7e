import * as path from "node:path";
import { defaultCrdDirectory, loadCrdManifests } from "./crds";
import { crdYaml, tempDir } from "../../test/support/components/crd-fixtures";

describe("loadCrdManifests", () => {
  test("reads every CRD of every YAML file, files in name order, documents in file order", () => {
    const d = tempDir({
      "b.yaml": `${crdYaml("lvmnodes", "LVMNode")}---\n`,
      "a.yml": `${crdYaml("lvmnodesets", "LVMNodeSet")}---\n${crdYaml("extras", "Extra")}`,
      "README.md": "not yaml",
    });
    try {
      expect(loadCrdManifests(d.dir).map((c) => c.metadata.name)).toEqual([
        "lvmnodesets.lvm.topolvm.io",
        "extras.lvm.topolvm.io",
        "lvmnodes.lvm.topolvm.io",
      ]);
    } finally {
      d.remove();
    }
  });

  test("names the file and document of every bad document", () => {
    const d = tempDir({
      "a.yaml": `${crdYaml("lvmnodes", "LVMNode")}---\napiVersion: v1\nkind: ConfigMap\nmetadata: { name: x }\n`,
      "b.yaml": `${crdYaml("lvmnodes", "LVMNode")}---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: {}\n`,
    });
    try {
      expect(() => loadCrdManifests(d.dir)).toThrow(
        [
          "invalid CRD files:",
          `  ${path.join(d.dir, "a.yaml")} (document 2): not an apiextensions.k8s.io/v1 CustomResourceDefinition (got v1/ConfigMap)`,
          `  ${path.join(d.dir, "b.yaml")} (document 1): lvmnodes.lvm.topolvm.io is also defined in ${path.join(d.dir, "a.yaml")} (document 1)`,
          `  ${path.join(d.dir, "b.yaml")} (document 2): metadata.name is missing`,
        ].join("\n"),
      );
    } finally {
      d.remove();
    }
  });

  test("reports invalid YAML with its place", () => {
    const d = tempDir({ "c.yaml": "a: [unclosed\n" });
    try {
      expect(() => loadCrdManifests(d.dir)).toThrow(
        new RegExp(`^invalid CRD files:\\n  ${path.join(d.dir, "c.yaml")} \\(document 1\\): invalid YAML: `),
      );
    } finally {
      d.remove();
    }
  });

  test("a missing or empty directory says how to generate the CRDs", () => {
    const d = tempDir({ "empty.yaml": "" });
    // A path inside a fresh temporary directory, not "/nonexistent": that is the home of Debian's
    // _apt and nobody users, and apt-get's sandbox creates it (a CI run failed on that).
    const missing = path.join(d.dir, "missing");
    expect(() => loadCrdManifests(missing)).toThrow(
      `${missing} does not exist: the CRDs are generated there by \`npm run generate\` (or pass crdDirectory)`,
    );
    try {
      expect(() => loadCrdManifests(d.dir)).toThrow(
        `${d.dir} holds no CustomResourceDefinition: generate them with \`npm run generate\``,
      );
    } finally {
      d.remove();
    }
  });
});

describe("defaultCrdDirectory", () => {
  const repo = path.resolve(__dirname, "../..");

  test("is deploy/crds of the package, from source and from the compiled dist/ tree", () => {
    expect(defaultCrdDirectory()).toBe(path.join(repo, "deploy", "crds"));
    const files = {
      existsSync: (p: string) => p === "/pkg/package.json",
      readFileSync: () => JSON.stringify({ name: "pulumi-lvm" }),
    };
    expect(defaultCrdDirectory("/pkg/dist/src/components", files)).toBe("/pkg/deploy/crds");
  });

  test("fails outside the package", () => {
    expect(() =>
      defaultCrdDirectory("/tmp/elsewhere", { existsSync: () => false, readFileSync: () => "" }),
    ).toThrow("cannot find the pulumi-lvm package root above /tmp/elsewhere; pass crdDirectory");
  });
});
