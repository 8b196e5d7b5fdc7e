import { bearerToken } from "./authorizer";
import { PROXY_AUTHORIZATION_HEADER } from "../../agent-api/auth";
import { requestCredentials } from "./request-credentials";

describe("requestCredentials", () => {
  test.each([
    ["Authorization alone", { authorization: "Bearer a" }, "Bearer a"],
    [
      "the proxy header alone (through the API server's pod proxy)",
      { [PROXY_AUTHORIZATION_HEADER]: "Bearer p" },
      "Bearer p",
    ],
    [
      "Authorization wins over the proxy header",
      { authorization: "Bearer a", [PROXY_AUTHORIZATION_HEADER]: "Bearer p" },
      "Bearer a",
    ],
    [
      "an empty Authorization still wins (it is judged alone)",
      { authorization: "", [PROXY_AUTHORIZATION_HEADER]: "Bearer p" },
      "",
    ],
    ["neither", {}, undefined],
  ])("%s", (_what, headers, expected) => {
    expect(requestCredentials(headers)).toBe(expected);
  });

  test("a repeated proxy header yields no bearer token", () => {
    const credentials = requestCredentials({
      [PROXY_AUTHORIZATION_HEADER]: ["Bearer p", "Bearer q"] as unknown as string,
    });
    expect(bearerToken(credentials)).toBeUndefined();
  });
});
