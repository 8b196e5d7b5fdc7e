import { specialSecretSig, specialSigKey } from "@pulumi/pulumi/runtime/rpc";
import { UNKNOWN } from "./index";
import { parseInputs } from "./state";
import { SECRET_SIGNATURE, SECRET_SIGNATURE_KEY, sealSecrets, unseal } from "./secrets";

const sealed = (value: unknown) => ({ [SECRET_SIGNATURE_KEY]: SECRET_SIGNATURE, value });

test("the signature is Pulumi's", () => {
  expect([SECRET_SIGNATURE_KEY, SECRET_SIGNATURE]).toEqual([specialSigKey, specialSecretSig]);
});

describe("sealSecrets", () => {
  test("wraps every agent's token as a secret and nothing else", () => {
    const props = {
      namespace: "lvm-system",
      agents: { a: { url: "http://a", token: "t-a" }, b: { url: "http://b", token: "t-b", ca: "PEM" } },
    };
    expect(sealSecrets(props, UNKNOWN)).toEqual({
      namespace: "lvm-system",
      agents: {
        a: { url: "http://a", token: sealed("t-a") },
        b: { url: "http://b", token: sealed("t-b"), ca: "PEM" },
      },
    });
    expect(props.agents.a.token).toBe("t-a"); // not mutated
  });

  test("wraps the cluster-mode kubeconfig as a secret and nothing else of it", () => {
    const props = { cluster: { kubeconfig: "KUBECONFIG", serviceAccount: "lvm-provisioner" } };
    expect(sealSecrets(props, UNKNOWN)).toEqual({
      cluster: { kubeconfig: sealed("KUBECONFIG"), serviceAccount: "lvm-provisioner" },
    });
    expect(sealSecrets({ cluster: { kubeconfig: UNKNOWN } }, UNKNOWN)).toEqual({
      cluster: { kubeconfig: UNKNOWN },
    });
  });

  test.each([
    ["an unknown token (preview)", { agents: { a: { url: "u", token: UNKNOWN } } }],
    ["a token already sealed", { agents: { a: { url: "u", token: sealed("t") } } }],
    ["no agents", { namespace: "x" }],
    ["malformed agents", { agents: ["a"] }],
    ["an agent without a token", { agents: { a: { url: "u" } } }],
  ])("leaves %s as it is", (_what, props) => {
    expect(sealSecrets(props as Record<string, unknown>, UNKNOWN)).toEqual(props);
  });
});

test("unseal replaces every secret, at any depth, by its plain value", () => {
  expect(unseal({ a: sealed({ b: [sealed("x"), 1] }), c: [sealed(null)], d: "e" })).toEqual({
    a: { b: ["x", 1] },
    c: [null],
    d: "e",
  });
});

test("stored inputs with sealed tokens parse as plain ones", () => {
  const parsed = parseInputs({
    nodeSetName: "edge",
    namespace: "lvm-system",
    spec: {
      volumeGroups: [
        {
          name: "vg-data",
          deviceSelector: {
            deviceSelectorTerms: [
              { matchExpressions: [{ key: "kname", operator: "In", values: ["/dev/vdb"] }] },
            ],
          },
        },
      ],
    },
    agents: { a: { url: "http://a", token: sealed("t-a") } },
  });
  expect(parsed.ok && parsed.inputs.agents).toEqual({ a: { url: "http://a", token: "t-a" } });
});

test("a malformed agent entry is reported without quoting its value (it may be a token)", () => {
  const parsed = parseInputs({
    nodeSetName: "edge",
    namespace: "lvm-system",
    spec: {},
    agents: { a: "t-secret", b: { url: 7, token: "t-b" } },
  });
  expect(parsed.ok).toBe(false);
  const problems = parsed.ok ? [] : parsed.problems.filter((p) => p.path.startsWith("agents"));
  expect(problems).toEqual([
    { path: "agents.a", message: "must be an object" },
    { path: "agents.b.url", message: "must be a string" },
  ]);
});
