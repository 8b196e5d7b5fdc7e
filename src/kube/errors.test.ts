import { isConflict, isNotFound, KubeApiError } from "./errors";

describe("KubeApiError", () => {
  test("names verb, object, status, reason, message and field causes", () => {
    const e = KubeApiError.fromResponse(
      "PATCH",
      "LVMNode storage/node-a",
      422,
      JSON.stringify({
        kind: "Status",
        reason: "Invalid",
        message: 'LVMNode.lvm.topolvm.io "node-a" is invalid',
        details: { causes: [{ field: "spec.volumeGroups[0].name", message: 'Invalid value: "A"' }] },
      }),
    );
    expect(e.message).toBe(
      'PATCH LVMNode storage/node-a: HTTP 422 Invalid: LVMNode.lvm.topolvm.io "node-a" is invalid (spec.volumeGroups[0].name: Invalid value: "A")',
    );
    expect(e.status).toBe(422);
    expect(e.reason).toBe("Invalid");
  });

  test("a body that is not JSON is quoted", () => {
    const e = KubeApiError.fromResponse("GET", "Nodes", 502, "Bad Gateway");
    expect(e.message).toBe("GET Nodes: HTTP 502: Bad Gateway");
  });

  test("no answer at all: status 0 and no HTTP part", () => {
    const e = new KubeApiError("GET", "Nodes", 0, "", "connect ECONNREFUSED 127.0.0.1:1");
    expect(e.message).toBe("GET Nodes: connect ECONNREFUSED 127.0.0.1:1");
  });

  test("isNotFound and isConflict", () => {
    expect(isNotFound(new KubeApiError("GET", "x", 404, "NotFound", ""))).toBe(true);
    expect(isConflict(new KubeApiError("POST", "x", 409, "AlreadyExists", ""))).toBe(true);
    expect(isNotFound(new Error("404"))).toBe(false);
  });
});
