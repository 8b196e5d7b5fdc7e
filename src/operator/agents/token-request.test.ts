import type { Clock } from "../../kube/clock";
import type { KubeClient } from "../../kube/client";
import { KubeApiError } from "../../kube/errors";
import { serviceAccountOfToken, tokenRequests } from "./token-request";

function setup(answer: (n: number) => unknown = (n) => ({ status: { token: `t${n}` } })) {
  let now = 1_000_000;
  const calls: Array<{ path: string; body: unknown }> = [];
  const kube = {
    async createSubresource(_r: unknown, ns: string, name: string, sub: string, body: unknown) {
      calls.push({ path: `${ns}/${name}/${sub}`, body });
      const a = answer(calls.length);
      if (a instanceof Error) throw a;
      return a;
    },
  } as unknown as KubeClient;
  const clock: Clock = { now: () => now, monotonic: () => now, setTimer: () => () => {} };
  const source = tokenRequests({ kube, serviceAccount: { namespace: "lvm", name: "op" }, clock });
  return { source, calls, advance: (ms: number) => (now += ms) };
}

test("one TokenRequest per node, for its own audience only, 600 s, for the operator's own service account", async () => {
  const { source, calls } = setup();
  expect(await source("n1")).toBe("t1");
  expect(await source("n2")).toBe("t2");
  expect(calls).toEqual(
    ["n1", "n2"].map((n) => ({
      path: "lvm/op/token",
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { audiences: [`pulumi-lvm-agent/${n}`], expirationSeconds: 600 },
      },
    })),
  );
});

test("reused until half its life is gone, then renewed; concurrent calls share one request", async () => {
  const { source, calls, advance } = setup();
  const [a, b] = await Promise.all([source("n1"), source("n1")]);
  expect([a, b]).toEqual(["t1", "t1"]);
  advance(299_000);
  expect(await source("n1")).toBe("t1");
  advance(2_000);
  expect(await source("n1")).toBe("t2");
  expect(calls).toHaveLength(2);
});

test("a shorter expirationTimestamp from the API server is honoured", async () => {
  const { source, advance } = setup((n) => ({
    status: { token: `t${n}`, expirationTimestamp: new Date(1_000_000 + 100_000).toISOString() },
  }));
  await source("n1");
  advance(51_000);
  expect(await source("n1")).toBe("t2");
});

test("a refused request is an error naming the node, the service account and the audience; not cached", async () => {
  const { source, calls } = setup((n) =>
    n === 1
      ? new KubeApiError("POST", "ServiceAccount lvm/op (token)", 403, "Forbidden", "forbidden")
      : { status: { token: "ok" } },
  );
  await expect(source("n1")).rejects.toThrow(
    /cannot get a token for node n1's agent \(TokenRequest for service account lvm\/op, audience pulumi-lvm-agent\/n1\): .*403/,
  );
  expect(await source("n1")).toBe("ok");
  expect(calls).toHaveLength(2);
});

test("an answer without a token is an error that quotes nothing", async () => {
  const { source } = setup(() => ({ status: {} }));
  await expect(source("n1")).rejects.toThrow("was answered without status.token");
});

test("serviceAccountOfToken reads the sub claim of a service-account JWT, nothing else", () => {
  const jwt = (claims: unknown) => `h.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.sig`;
  expect(serviceAccountOfToken(jwt({ sub: "system:serviceaccount:lvm-system:lvm-operator" }))).toEqual({
    namespace: "lvm-system",
    name: "lvm-operator",
  });
  expect(serviceAccountOfToken(jwt({ sub: "alice" }))).toBeUndefined();
  expect(serviceAccountOfToken("static-token")).toBeUndefined();
  expect(serviceAccountOfToken("a.!!!.c")).toBeUndefined();
});
