import { manifestFiles, sortManifests } from "./manifests-render";

const o = (kind: string, name: string, namespace?: string) => ({
  apiVersion: "v1",
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}) },
});

test("apply order: by kind as they depend on each other, then namespace and name; kinds not known last", () => {
  const sorted = [
    o("Namespace", "b"),
    o("CustomResourceDefinition", "a.example.com"),
    o("ServiceAccount", "x", "a"),
    o("ServiceAccount", "a", "b"),
    o("DaemonSet", "agent", "b"),
    o("ConfigMap", "z", "b"),
    o("Widget", "a", "b"),
  ];
  for (const input of [
    sorted,
    [...sorted].reverse(),
    [sorted[4]!, sorted[0]!, ...sorted.slice(5), ...sorted.slice(1, 4)],
  ])
    expect(sortManifests(input)).toEqual(sorted);
});

test("file names carry the kind's place, so kubectl apply -f DIR (by file name) keeps the order", () => {
  const files = manifestFiles("# h\n", [o("DaemonSet", "agent", "s"), o("Namespace", "s"), o("Widget", "w")]);
  expect(files.map((f) => f.name)).toEqual([
    "00-namespace-s.yaml",
    "10-daemonset-agent.yaml",
    "18-widget-w.yaml",
  ]);
  expect(files[0]!.text).toBe("# h\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: s\n");
});
