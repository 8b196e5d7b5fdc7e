import { writeFile } from "node:fs/promises";
import type { CliIO } from "../../process/subcommand";
import type { DiskMap } from "./disk-map";
import { renderPage } from "./page";

/**
 * `--html FILE` of plan and status: writes the page of `map` to `file` and says so on stderr. A file
 * that cannot be written is said on stderr too, naming it; the result is then false.
 */
export async function writePage(io: CliIO, command: string, file: string, map: DiskMap): Promise<boolean> {
  const write = io.writeFile ?? ((f: string, text: string) => writeFile(f, text, "utf8"));
  try {
    await write(file, renderPage(map));
  } catch (error) {
    io.stderr(`pulumi-lvm ${command}: --html ${file}: ${(error as Error).message}\n`);
    return false;
  }
  const nodes = `${map.nodes.length} ${map.nodes.length === 1 ? "node" : "nodes"}`;
  io.stderr(`pulumi-lvm ${command}: wrote ${file} (${nodes}; open it in a browser, it loads nothing)\n`);
  return true;
}
