import { isSecretField, REDACTED, redactor } from "./bundle-redaction";

const JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJl";
const PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAKC\n-----END RSA PRIVATE KEY-----";

test("field names: credentials by name, not the fields that only name or point to one", () => {
  for (const f of [
    "token",
    "password",
    "client-key-data",
    "tls.key",
    "ca.crt",
    "apiKey",
    "bearerToken",
    "secret",
  ])
    expect([f, isSecretField(f)]).toEqual([f, true]);
  for (const f of ["secretName", "tokenSecretRef", "key", "topologyKey", "name", "value", "message"])
    expect([f, isSecretField(f)]).toEqual([f, false]);
});

test("text: PEM private keys (even cut off), JWTs, bearer values and the user's own credentials, literally and in base64", () => {
  const r = redactor(["opaque-user-token-123", "short"]);
  const base64 = Buffer.from("opaque-user-token-123").toString("base64");
  const out = r.text(
    `key ${PEM} after\nsa ${JWT}\nAuthorization: Bearer abc.def.ghi\nmine opaque-user-token-123 and ${base64}\ncut -----BEGIN PRIVATE KEY-----\nMIIE`,
  );
  expect(out).toBe(
    `key ${REDACTED} (private key) after\nsa ${REDACTED}\nAuthorization: Bearer ${REDACTED}\nmine ${REDACTED} and ${REDACTED}\ncut ${REDACTED} (private key)`,
  );
  expect(r.text("short words stay short; Bearer values too")).toBe(
    "short words stay short; Bearer values too",
  );
});

test("objects: credential fields, env values, last-applied-configuration and managedFields; everything else kept", () => {
  const pod = {
    metadata: {
      name: "agent-x",
      annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{...}", keep: "me" },
      managedFields: [{ manager: "kubectl" }],
    },
    spec: {
      automountServiceAccountToken: true,
      tolerations: [{ key: "node-role.kubernetes.io/control-plane", operator: "Exists" }],
      volumes: [{ name: "tls", secret: { secretName: "agent-tls" } }],
      containers: [
        {
          name: "agent",
          args: ["--token", JWT],
          env: [
            { name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
            { name: "API_PASSWORD", value: "hunter22" },
          ],
        },
      ],
    },
    data: { token: "plain", tokens: ["a", "b"], "ca.crt": "CERT" },
  };
  expect(redactor([]).object(pod)).toEqual({
    metadata: {
      name: "agent-x",
      annotations: { "kubectl.kubernetes.io/last-applied-configuration": REDACTED, keep: "me" },
    },
    spec: {
      automountServiceAccountToken: true,
      tolerations: [{ key: "node-role.kubernetes.io/control-plane", operator: "Exists" }],
      volumes: [{ name: "tls", secret: { secretName: "agent-tls" } }],
      containers: [
        {
          name: "agent",
          args: ["--token", REDACTED],
          env: [
            { name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
            { name: "API_PASSWORD", value: REDACTED },
          ],
        },
      ],
    },
    data: { token: REDACTED, tokens: [REDACTED, REDACTED], "ca.crt": REDACTED },
  });
});
