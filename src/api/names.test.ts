import {
  dnsLabelProblem,
  dnsSubdomainProblem,
  labelKeyProblem,
  labelValueProblem,
  logicalVolumeName,
  resourceName,
} from "./names";

const LABEL = (name: string) =>
  `must be a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit (got "${name}")`;

describe("dnsLabelProblem", () => {
  test.each(["a", "vg1", "thin-pool-1", "0", "a".repeat(63)])("%s is a DNS-1123 label", (name) => {
    expect(dnsLabelProblem(name)).toBeUndefined();
  });

  test.each([
    ["", "must not be empty"],
    ["a".repeat(64), "must be at most 63 characters (got 64)"],
    ["VG1", LABEL("VG1")],
    ["vg_1", LABEL("vg_1")],
    ["-vg", LABEL("-vg")],
    ["vg-", LABEL("vg-")],
    ["vg.1", LABEL("vg.1")],
    ["vg 1", LABEL("vg 1")],
    ["vgé", LABEL("vgé")],
  ])("%j: %s", (name, problem) => {
    expect(dnsLabelProblem(name)).toBe(problem);
  });
});

describe("dnsSubdomainProblem", () => {
  test.each(["node-1", "node-1.example.com", "a".repeat(253)])("%s is a DNS-1123 subdomain", (name) => {
    expect(dnsSubdomainProblem(name)).toBeUndefined();
  });

  test.each([
    ["", "must not be empty"],
    ["a".repeat(254), "must be at most 253 characters (got 254)"],
    ["Node_1", `must be a DNS-1123 subdomain: lowercase letters, digits, '-' and '.' (got "Node_1")`],
    ["node..1", `must be a DNS-1123 subdomain: lowercase letters, digits, '-' and '.' (got "node..1")`],
  ])("%j: %s", (name, problem) => {
    expect(dnsSubdomainProblem(name)).toBe(problem);
  });
});

describe("label keys and values", () => {
  const KEY = (key: string) =>
    `must be a label key: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, optionally after a DNS prefix and '/' (got "${key}")`;

  test.each(["zone", "topology.kubernetes.io/zone", "Custom_Key.1", "example.com/A-b", "a".repeat(63)])(
    "%s is a label key",
    (key) => expect(labelKeyProblem(key)).toBeUndefined(),
  );

  test.each([
    ["", KEY("")],
    ["a".repeat(64), KEY("a".repeat(64))],
    ["-zone", KEY("-zone")],
    ["example.com/", KEY("example.com/")],
    [
      "Example.com/zone",
      'must be a label key: its prefix must be a DNS-1123 subdomain (got "Example.com/zone")',
    ],
    ["/zone", 'must be a label key: its prefix must be a DNS-1123 subdomain (got "/zone")'],
  ])("%j is not a label key", (key, problem) => expect(labelKeyProblem(key)).toBe(problem));

  test.each(["", "a", "archive-storage", "A_b.c", "a".repeat(63)])("%j is a label value", (value) =>
    expect(labelValueProblem(value)).toBeUndefined(),
  );

  test.each(["-a", "a-", "a b", "a/b", "a".repeat(64)])("%j is not a label value", (value) =>
    expect(labelValueProblem(value)).toBe(
      `must be a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit (got "${value}")`,
    ),
  );
});

describe("name schemas", () => {
  const messages = (r: { error?: { issues: Array<{ message: string }> } }) =>
    r.error?.issues.map((i) => i.message) ?? [];

  test("resourceName reports why a name is wrong", () => {
    expect(messages(resourceName("x").safeParse("vg1"))).toEqual([]);
    expect(messages(resourceName("x").safeParse("VG"))).toEqual([LABEL("VG")]);
  });

  test.each([
    ["thin-pool", []],
    ["my-snapshot", []],
    ["snapshot", ['must not start with "snapshot": LVM reserves it']],
    ["pvmove1", ['must not start with "pvmove": LVM reserves it']],
    ["Snapshot", [LABEL("Snapshot")]],
  ])("logicalVolumeName %j", (name, expected) => {
    expect(messages(logicalVolumeName("x").safeParse(name))).toEqual(expected);
  });
});
