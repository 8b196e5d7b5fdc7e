/**
 * Where test/pulumi/install-command.sh puts `pulumi-resource-command` (the engine's plugin-cache
 * layout, at the version of @pulumi/command the package pins), and a loud failure when it is not
 * there. See docs/testing-pulumi.md.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export const COMMAND_INSTALL_SCRIPT = path.join(__dirname, "install-command.sh");

/** The @pulumi/command version installed: the SDK asks the engine for exactly this plugin. */
export function commandSdkVersion(): string {
  const file = require.resolve("@pulumi/command/package.json");
  return (JSON.parse(fs.readFileSync(file, "utf8")) as { version: string }).version;
}

/** $PULUMI_LVM_CACHE/pulumi-command/<version>/plugins/resource-command-v<version>. */
export function commandPluginDir(version = commandSdkVersion()): string {
  const cache = process.env.PULUMI_LVM_CACHE || path.join(os.homedir(), ".cache", "pulumi-lvm");
  return path.join(cache, "pulumi-command", version, "plugins", `resource-command-v${version}`);
}

/** Throws, saying how to build it, unless the plugin is installed. Never skips. */
export function requireCommandPlugin(dir = commandPluginDir()): string {
  try {
    fs.accessSync(path.join(dir, "pulumi-resource-command"), fs.constants.X_OK);
    return dir;
  } catch {
    const rel = path.relative(process.cwd(), COMMAND_INSTALL_SCRIPT) || COMMAND_INSTALL_SCRIPT;
    throw new Error(
      [
        "",
        "==================================================================================",
        `The Command provider plugin is missing: ${path.join(dir, "pulumi-resource-command")}`,
        `  run:       bash ${rel}`,
        "  (builds pulumi-resource-command from the verified source snapshot with Go;",
        "   ~7 min cold, instant once cached; test/setup.sh does not run it)",
        "==================================================================================",
      ].join("\n"),
    );
  }
}
