import { createLog } from "./logger";
import { redactSecrets } from "./redact";

const JWT =
  "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6bHZtOm9wIn0.c2lnbmF0dXJlLXNlY3JldA";

function capture(now = () => Date.UTC(2026, 0, 2, 3, 4, 5)) {
  const lines: string[] = [];
  return { lines, log: createLog({ writeLine: (l) => lines.push(l), now }) };
}

describe("createLog", () => {
  it("writes one JSON object per line: level, time from the given clock, msg, then the entry's fields in order", () => {
    const { lines, log } = capture();
    log({ msg: "listening", url: "https://127.0.0.1:8080", node: "n1" });
    expect(lines).toEqual([
      '{"level":"info","time":"2026-01-02T03:04:05.000Z","msg":"listening","url":"https://127.0.0.1:8080","node":"n1"}',
    ]);
  });

  it("an entry carrying tokens: no token text reaches the output, the rest does", () => {
    const { lines, log } = capture();
    log({
      msg: "request",
      path: "/v1/apply",
      token: "s3cr3t-plain-token",
      headers: { Authorization: `Bearer ${JWT}`, "content-type": "application/json" },
      upstream: { user: { accessToken: "s3cr3t-access-token" }, attempts: [{ id_token: "s3cr3t-id-token" }] },
      error: `GET https://api:6443/x failed: header "authorization: Bearer s3cr3t-in-text" refused (${JWT})`,
    });
    const out = lines.join("\n");
    for (const secret of ["s3cr3t", JWT, "c2lnbmF0dXJl", "eyJ"]) expect(out).not.toContain(secret);
    const entry = JSON.parse(lines[0]!);
    expect(entry).toMatchObject({
      msg: "request",
      path: "/v1/apply",
      token: "[redacted]",
      headers: { Authorization: "[redacted]", "content-type": "application/json" },
      upstream: { user: { accessToken: "[redacted]" }, attempts: [{ id_token: "[redacted]" }] },
    });
    expect(entry.error).toBe(
      'GET https://api:6443/x failed: header "authorization: Bearer [redacted]" refused ([redacted])',
    );
  });
});

describe("redactSecrets", () => {
  it("leaves what is not a secret alone: names like tokenFile, hosts, numbers, null", () => {
    const entry = {
      msg: "m",
      tokenFile: "/var/run/token",
      host: "5ecret-1nternal-host",
      n: 3,
      x: null,
      token: undefined,
    };
    expect(redactSecrets(entry)).toEqual(entry);
  });

  it("an Error becomes its name and (redacted) message", () => {
    expect(redactSecrets({ error: new TypeError("bad Bearer abc") })).toEqual({
      error: { name: "TypeError", message: "bad Bearer [redacted]" },
    });
  });
});
