import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * This package's version and the container image it builds, in one place: the CLI's `--version`,
 * LvmSystem's default agentImage and the image recipe (deploy/image/build.ts) all read them here.
 */

/** The version in this package's package.json (found from src/ and from dist/src/ alike). */
export const PACKAGE_VERSION: string = readOwnPackageJson(__dirname).version;

/** The repository of the image `npm run image` builds (docs/image.md); push it anywhere and set agentImage. */
export const IMAGE_REPOSITORY = "localhost/pulumi-lvm";

/** The image `npm run image` builds from this version: LvmSystem's default agentImage. */
export const DEFAULT_IMAGE = `${IMAGE_REPOSITORY}:${PACKAGE_VERSION}`;

function readOwnPackageJson(from: string): { version: string } {
  for (let dir = from; ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        name?: string;
        version: string;
      };
      if (pkg.name === "pulumi-lvm") return pkg;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    if (dirname(dir) === dir) throw new Error(`pulumi-lvm: no package.json of pulumi-lvm above ${from}`);
  }
}
