import { reviewApproval } from "./approvals";
import type { RequestUser } from "./review";
import type { AdmissionRequest } from "./review";

const request = (annotation: string | undefined, pending?: string): AdmissionRequest => ({
  uid: "u1",
  kind: { group: "lvm.topolvm.io", version: "v2alpha1", kind: "LVMNode" },
  operation: "UPDATE",
  namespace: "storage",
  name: "n1",
  userInfo: { username: "alice", groups: ["devs"] },
  object: {
    metadata: {
      name: "n1",
      namespace: "storage",
      ...(annotation ? { annotations: { "lvm.topolvm.io/approve": annotation } } : {}),
    },
    ...(pending ? { status: { pendingApproval: { hash: pending } } } : {}),
  },
});

test("a caller without the verb approve: 403 naming the ClusterRole; the access review asked about that user and LVMNode", async () => {
  const asked: unknown[] = [];
  const access = async (u: RequestUser, ns: string, n: string) => (
    asked.push([u.username, u.groups, ns, n]),
    false
  );
  const v = await reviewApproval(request("h1", "h1"), access);
  expect(v).toMatchObject({ allowed: false, code: 403 });
  expect(!v.allowed && v.message).toMatch(
    /alice may not approve.*verb approve on lvmnodes.*ClusterRole pulumi-lvm-approver/,
  );
  expect(asked).toEqual([["alice", ["devs"], "storage", "n1"]]);
});

test("an approver: the waiting plan's hash is allowed; another hash is refused naming the waiting one", async () => {
  const yes = async () => true;
  expect(await reviewApproval(request("h1", "h1"), yes)).toEqual({ allowed: true });
  const stale = await reviewApproval(request("h0", "h1"), yes);
  expect(stale).toMatchObject({ allowed: false, code: 409 });
  expect(!stale.allowed && stale.message).toMatch(/approval h0 is stale: the plan waiting now is h1/);
  // Nothing waiting yet (an approval given from a preview): allowed; the operator checks the hash.
  expect(await reviewApproval(request("h1"), yes)).toEqual({ allowed: true });
});

test("no annotation (removed): allowed without an access review", async () => {
  const never = async () => {
    throw new Error("not asked");
  };
  expect(await reviewApproval(request(undefined), never)).toEqual({ allowed: true });
});
