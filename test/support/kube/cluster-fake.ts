import type { KubePaths } from "../../../src/kube/client";
import type { Resource } from "../../../src/kube/resources";
import { FakeKube } from "./fake-kube";

/**
 * FakeKube with the one list a CLI's `findByName` asks for (src/cli/cluster.ts: a field selector on
 * the name, across namespaces): the stored objects of `resource` registered by `named`.
 */
export class ClusterFake extends FakeKube implements KubePaths {
  constructor(
    private readonly resource: Resource,
    private readonly named: ReadonlyArray<{ namespace: string; name: string }> = [],
  ) {
    super();
  }
  async getPath(path: string): Promise<unknown> {
    const name = decodeURIComponent(path.split("metadata.name%3D")[1] ?? "");
    const items = this.named
      .filter((s) => s.name === name)
      .map((s) => this.peek(this.resource, s.namespace, s.name));
    return { items };
  }
  postPath(): Promise<unknown> {
    throw new Error("ClusterFake: postPath is not faked");
  }
}
