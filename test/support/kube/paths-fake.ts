import { KubeApiError } from "../../../src/kube/errors";

/**
 * An API server by path, for the commands that read by path (the support bundle): JSON answers and
 * texts (pod logs) looked up by the whole path, else by the path without its query; an Error in a
 * table is thrown; a path in no table is a 404 as the API server gives it. Every path asked is
 * recorded in `paths`.
 */
export interface PathsFake {
  readonly paths: string[];
  getPath(path: string): Promise<unknown>;
  getText(path: string): Promise<string>;
}

export function pathsFake(
  json: Readonly<Record<string, unknown>>,
  texts: Readonly<Record<string, string>> = {},
): PathsFake {
  const paths: string[] = [];
  const answer = (table: Readonly<Record<string, unknown>>, path: string) => {
    paths.push(path);
    const found = table[path] ?? table[path.split("?")[0]!];
    if (found instanceof Error) throw found;
    if (found === undefined)
      throw new KubeApiError(
        "GET",
        path,
        404,
        "NotFound",
        "the server could not find the requested resource",
      );
    return found;
  };
  return {
    paths,
    getPath: async (path) => answer(json, path),
    getText: async (path) => answer(texts, path) as string,
  };
}
