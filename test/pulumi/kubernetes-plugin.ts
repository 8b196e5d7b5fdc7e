/**
 * Where test/pulumi/install-kubernetes.sh puts `pulumi-resource-kubernetes` (the engine's
 * plugin-cache layout, at the version of @pulumi/kubernetes the package pins), and a loud failure
 * when it is not there. See docs/testing-pulumi.md.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export const KUBERNETES_INSTALL_SCRIPT = path.join(__dirname, "install-kubernetes.sh");

/** The @pulumi/kubernetes version installed: the SDK asks the engine for exactly this plugin. */
export function kubernetesSdkVersion(): string {
  const file = require.resolve("@pulumi/kubernetes/package.json");
  return (JSON.parse(fs.readFileSync(file, "utf8")) as { version: string }).version;
}

/** $PULUMI_LVM_CACHE/pulumi-kubernetes/<version>/plugins/resource-kubernetes-v<version>. */
export function kubernetesPluginDir(version = kubernetesSdkVersion()): string {
  const cache = process.env.PULUMI_LVM_CACHE || path.join(os.homedir(), ".cache", "pulumi-lvm");
  return path.join(cache, "pulumi-kubernetes", version, "plugins", `resource-kubernetes-v${version}`);
}

/** Throws, saying how to build it, unless the plugin is installed. Never skips. */
export function requireKubernetesPlugin(dir = kubernetesPluginDir()): string {
  try {
    fs.accessSync(path.join(dir, "pulumi-resource-kubernetes"), fs.constants.X_OK);
    return dir;
  } catch {
    const rel = path.relative(process.cwd(), KUBERNETES_INSTALL_SCRIPT) || KUBERNETES_INSTALL_SCRIPT;
    throw new Error(
      [
        "",
        "==================================================================================",
        `The Kubernetes provider plugin is missing: ${path.join(dir, "pulumi-resource-kubernetes")}`,
        `  run:       bash ${rel}`,
        "  (builds pulumi-resource-kubernetes from the verified source snapshot with Go;",
        "   25-40 min cold, instant once cached; test/setup.sh runs it)",
        "==================================================================================",
      ].join("\n"),
    );
  }
}
