/**
 * The CRDs we generate, on a real kube-apiserver: every case of test/api/rule-cases.ts is sent to it,
 * and it must do what the case says (valid cases accepted; invalid ones rejected with the expected
 * message, or accepted when only our validation enforces the rule, as docs/api.md says). This is
 * what keeps the CEL rules and our zod checks in agreement.
 *
 * Needs the binaries of test/env/install.sh; without them the suite fails saying so.
 */
import { startControlPlane, type ControlPlane } from "../env/cluster";
import { API_RULES } from "../../src/api/rules";
import { crds } from "../../src/crd/crds";
import { caseObject, example, RULE_CASES, type Manifest, type RuleCase } from "../api/rule-cases";

jest.setTimeout(60_000);

const NS = "rules";
let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane();
  for (const crd of crds()) {
    const r = await cp.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    if (r.status !== 201)
      throw new Error(`CRD ${crd.metadata.name} rejected: HTTP ${r.status}: ${r.body?.message}`);
  }
  for (const crd of crds()) await waitEstablished(crd.metadata.name);
  const ns = await cp.request("POST", "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: NS },
  });
  if (ns.status !== 201) throw new Error(`namespace: HTTP ${ns.status}: ${ns.body?.message}`);
}, 120_000);

afterAll(async () => {
  await cp?.stop();
});

async function waitEstablished(name: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const r = await cp.request("GET", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
    if (r.body?.status?.conditions?.some((c: Manifest) => c.type === "Established" && c.status === "True"))
      return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`CRD ${name} not Established after 20 s`);
}

let counter = 0;

/**
 * Creates the case's object (strict field validation, as kubectl apply does) and, when it has a
 * status, writes that through the status subresource. Returns the first refusal, or undefined.
 */
async function send(c: RuleCase): Promise<{ status: number; message: string } | undefined> {
  const obj = caseObject(c);
  const plural = obj.kind === "LVMNode" ? "lvmnodes" : "lvmnodesets";
  const collection = `/apis/lvm.topolvm.io/v2alpha1/namespaces/${NS}/${plural}`;
  const name = `case-${++counter}`;
  const { status, ...rest } = obj;
  const body = {
    ...rest,
    metadata: { ...obj.metadata, name, namespace: NS, uid: undefined, ownerReferences: undefined },
  };
  const created = await cp.request("POST", `${collection}?fieldValidation=Strict`, body);
  if (created.status !== 201) return { status: created.status, message: String(created.body?.message) };
  if (status === undefined) return undefined;
  const written = await cp.request("PUT", `${collection}/${name}/status?fieldValidation=Strict`, {
    ...created.body,
    status,
  });
  if (written.status !== 200) return { status: written.status, message: String(written.body?.message) };
  return undefined;
}

test.each(["LVMNodeSet", "LVMNode"] as const)(
  "the proposal's %s is stored as written: nothing pruned",
  async (kind) => {
    const obj = example(kind);
    const plural = kind === "LVMNode" ? "lvmnodes" : "lvmnodesets";
    const collection = `/apis/lvm.topolvm.io/v2alpha1/namespaces/${NS}/${plural}`;
    const { status, ...rest } = obj;
    const name = `example-${plural}`;
    const metadata = { ...obj.metadata, name, namespace: NS, uid: undefined, ownerReferences: undefined };
    const created = await cp.request("POST", `${collection}?fieldValidation=Strict`, { ...rest, metadata });
    expect(created.status).toBe(201);
    expect(created.body.spec).toEqual(obj.spec);
    const written = await cp.request("PUT", `${collection}/${name}/status?fieldValidation=Strict`, {
      ...created.body,
      status,
    });
    expect(written.status).toBe(200);
    expect(written.body.status).toEqual(status);
    expect(written.body.spec).toEqual(obj.spec);
  },
);

const cases = Object.entries(RULE_CASES).flatMap(([id, list]) => list.map((c) => [id, c.name, c] as const));

test.each(cases)("%s: %s", async (_id, _name, c) => {
  const refusal = await send(c);
  const expected = c.problems.length === 0 ? "accepts" : c.apiServer;
  if (expected === undefined) throw new Error("the case does not say what the API server does with it");
  if (expected === "accepts") {
    expect(refusal).toBeUndefined();
  } else {
    expect(refusal?.message).toContain(expected.rejects);
  }
});

test("every CEL rule of API_RULES is exercised by a case the API server rejects with its message", () => {
  for (const rule of API_RULES) {
    if (!("cel" in rule)) continue;
    const rejects = RULE_CASES[rule.id].flatMap((c) =>
      typeof c.apiServer === "object" ? [c.apiServer.rejects] : [],
    );
    expect({ rule: rule.id, rejects }).toEqual({
      rule: rule.id,
      rejects: expect.arrayContaining([rule.cel]),
    });
  }
});
