import { KubeApiError } from "../kube/errors";
import { BundleCollector } from "./bundle-collector";
import { redactor } from "./bundle-redaction";

const busy = () => new KubeApiError("GET", "/apis/x", 429, "TooManyRequests", "storage is (re)initializing");

describe("BundleCollector: answers the API server asks to repeat", () => {
  test("a 429 is asked again (with waits) and the answer kept", async () => {
    const answers: unknown[] = [busy(), busy(), { items: [] }];
    const waits: number[] = [];
    const c = new BundleCollector(
      {
        getPath: async () => {
          const a = answers.shift();
          if (a instanceof Error) throw a;
          return a;
        },
        getText: async () => "",
      },
      redactor([]),
      async (ms) => void waits.push(ms),
    );
    expect(await c.read("LVMNodes", "/apis/x")).toEqual({ items: [] });
    expect(waits).toEqual([500, 1000]);
    expect(c.failed).toEqual([]);
  });

  test("still busy after five tries: recorded as failed with its status; a 403 is not asked again", async () => {
    let calls = 0;
    const c = new BundleCollector(
      {
        getPath: async () => {
          calls++;
          throw busy();
        },
        getText: async () => {
          calls++;
          throw new KubeApiError("GET", "/log", 403, "Forbidden", "no");
        },
      },
      redactor([]),
      async () => undefined,
    );
    expect(await c.read("LVMNodes", "/apis/x")).toBeUndefined();
    expect(calls).toBe(5);
    expect(c.failed).toEqual([expect.objectContaining({ what: "LVMNodes", status: 429 })]);
    await c.addText("log", "a log", "/log");
    expect(calls).toBe(6);
  });
});
