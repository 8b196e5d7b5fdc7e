import { bearerToken, createAuthorizer, REQUIRED_ACCESS } from "./authorizer";
import type { KubeAuthClient, ResourceAttributes } from "./kube-auth";

/** A client whose answers the test sets, counting calls. */
function client(
  opts: { users?: Record<string, string>; allowed?: string[]; audiences?: string[]; fail?: boolean } = {},
) {
  const calls = {
    tokenReview: 0,
    sar: [] as Array<{ user: string; groups: readonly string[]; attributes: ResourceAttributes }>,
    audiences: [] as string[][],
  };
  const c: KubeAuthClient = {
    async tokenReview(token, audiences) {
      calls.tokenReview++;
      calls.audiences.push([...audiences]);
      if (opts.fail) throw new Error("connect ECONNREFUSED");
      const user = opts.users?.[token];
      return user
        ? {
            authenticated: true,
            user: { username: user, groups: ["g1"] },
            audiences: opts.audiences ?? [...audiences],
          }
        : { authenticated: false };
    },
    async subjectAccessReview(user, groups, attributes) {
      calls.sar.push({ user, groups, attributes });
      return { allowed: (opts.allowed ?? []).includes(user), reason: "no RBAC rule" };
    },
  };
  return { c, calls };
}

describe("createAuthorizer", () => {
  it("needs a bearer token: 401 without one, and no review is made", async () => {
    const { c, calls } = client();
    const auth = createAuthorizer({ client: c, node: "node-a" });
    expect(await auth(undefined)).toMatchObject({ ok: false, status: 401 });
    expect(await auth("Basic dXNlcjpwYXNz")).toMatchObject({ ok: false, status: 401 });
    expect(calls.tokenReview).toBe(0);
  });

  it("401 for a token the TokenReview rejects; 403 for a user the SubjectAccessReview denies", async () => {
    const { c } = client({ users: { good: "alice", other: "bob" }, allowed: ["alice"] });
    const auth = createAuthorizer({ client: c, node: "node-a" });
    expect(await auth("Bearer bad")).toMatchObject({ ok: false, status: 401 });
    const denied = await auth("Bearer other");
    expect(denied).toMatchObject({ ok: false, status: 403 });
    expect(denied.ok === false && denied.message).toMatch(
      /user "bob" may not update lvmnodes.lvm.topolvm.io\/node-a: no RBAC rule/,
    );
    expect(await auth("Bearer good")).toEqual({ ok: true, user: { username: "alice", groups: ["g1"] } });
  });

  it("asks for update on lvmnodes.lvm.topolvm.io/<node> in the namespace, with the user's groups, for our audiences", async () => {
    const { c, calls } = client({ users: { t: "alice" }, allowed: ["alice"] });
    await createAuthorizer({
      client: c,
      node: "node-a",
      namespace: "pulumi-lvm-system",
      audiences: ["aud-1"],
    })("Bearer t");
    expect(calls.audiences).toEqual([["aud-1"]]);
    expect(calls.sar).toEqual([
      {
        user: "alice",
        groups: ["g1"],
        attributes: { ...REQUIRED_ACCESS, name: "node-a", namespace: "pulumi-lvm-system" },
      },
    ]);
  });

  it("rejects a token authenticated for other audiences only", async () => {
    const { c, calls } = client({
      users: { t: "alice" },
      allowed: ["alice"],
      audiences: ["https://kubernetes.default.svc"],
    });
    const outcome = await createAuthorizer({ client: c, node: "node-a", audiences: ["pulumi-lvm-agent"] })(
      "Bearer t",
    );
    expect(outcome).toMatchObject({ ok: false, status: 401 });
    expect(outcome.ok === false && outcome.message).toMatch(/not bound to audience pulumi-lvm-agent/);
    expect(calls.sar).toEqual([]);
  });

  it("caches decisions (allowed and denied) for the TTL, then asks again", async () => {
    let now = 1000;
    const { c, calls } = client({ users: { good: "alice", other: "bob" }, allowed: ["alice"] });
    const auth = createAuthorizer({ client: c, node: "node-a", cacheTtlMs: 5000, now: () => now });
    await auth("Bearer good");
    await auth("Bearer good");
    await auth("Bearer other");
    await auth("Bearer other");
    expect(calls.tokenReview).toBe(2);
    now += 5001;
    await auth("Bearer good");
    expect(calls.tokenReview).toBe(3);
  });

  it("keeps the cache bounded", async () => {
    const { c, calls } = client({
      users: Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`t${i}`, `u${i}`])),
      allowed: [],
    });
    const auth = createAuthorizer({ client: c, node: "n", cacheSize: 2 });
    for (let i = 0; i < 5; i++) await auth(`Bearer t${i}`);
    await auth("Bearer t0"); // evicted: asked again
    await auth("Bearer t4"); // still cached
    expect(calls.tokenReview).toBe(6);
  });

  it("answers 503 when the API server cannot be reached, and does not cache that", async () => {
    const { c, calls } = client({ fail: true });
    const auth = createAuthorizer({ client: c, node: "n" });
    expect(await auth("Bearer t")).toMatchObject({ ok: false, status: 503 });
    await auth("Bearer t");
    expect(calls.tokenReview).toBe(2);
  });
});

describe("bearerToken", () => {
  it.each([
    ["Bearer abc", "abc"],
    ["bearer abc", "abc"],
    ["Bearer  abc ", "abc"],
    ["Bearer", undefined],
    ["Bearer a b", undefined],
    ["Token abc", undefined],
    [undefined, undefined],
  ])("%j → %j", (header, token) => expect(bearerToken(header)).toBe(token));
});
