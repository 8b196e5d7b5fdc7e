import { requestCredentials as apiServerCredentials } from "./connection";
import { kubeStatusMessage } from "./errors";

test("apiServerCredentials: a bearer header and the TLS options the kubeconfig gives", async () => {
  expect(
    await apiServerCredentials({
      server: "https://api.example:6443",
      ca: () => "CA",
      token: () => "user-token",
    }),
  ).toEqual({
    headers: { authorization: "Bearer user-token" },
    tls: { ca: "CA" },
  });
  expect(
    await apiServerCredentials({
      server: "https://x",
      cert: "C",
      key: "K",
      tlsServerName: "kubernetes",
      insecureSkipTlsVerify: true,
    }),
  ).toEqual({
    headers: {},
    tls: { cert: "C", key: "K", servername: "kubernetes", rejectUnauthorized: false },
  });
  expect(await apiServerCredentials({ server: "https://x" })).toEqual({ headers: {} });
});

test("an exec plugin's credential wins over the kubeconfig's own", async () => {
  expect(
    await apiServerCredentials({
      server: "https://x",
      token: () => "static",
      exec: async () => ({ token: "from-plugin", clientCertificateData: "PC", clientKeyData: "PK" }),
    }),
  ).toEqual({ headers: { authorization: "Bearer from-plugin" }, tls: { cert: "PC", key: "PK" } });
});

test("kubeStatusMessage reads Status bodies only", () => {
  expect(kubeStatusMessage({ kind: "Status", message: "m" })).toBe("m");
  expect(kubeStatusMessage({ error: { message: "m" } })).toBeUndefined();
  expect(kubeStatusMessage("text")).toBeUndefined();
});
