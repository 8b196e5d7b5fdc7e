import { apiServerCredentials, kubeStatusMessage } from "./api-server";

test("apiServerCredentials: a bearer header and the TLS options the kubeconfig gives", () => {
  expect(
    apiServerCredentials({ server: "https://api.example:6443", ca: "CA", token: () => "user-token" }),
  ).toEqual({
    headers: { authorization: "Bearer user-token" },
    tls: { ca: "CA" },
  });
  expect(
    apiServerCredentials({
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
  expect(apiServerCredentials({ server: "https://x" })).toEqual({ headers: {} });
});

test("kubeStatusMessage reads Status bodies only", () => {
  expect(kubeStatusMessage({ kind: "Status", message: "m" })).toBe("m");
  expect(kubeStatusMessage({ error: { message: "m" } })).toBeUndefined();
  expect(kubeStatusMessage("text")).toBeUndefined();
});
