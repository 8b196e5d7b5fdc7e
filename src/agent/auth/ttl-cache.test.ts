import { TtlCache } from "./ttl-cache";

describe("TtlCache", () => {
  it("forgets entries after their TTL", () => {
    let now = 0;
    const c = new TtlCache<number>({ ttlMs: 100, now: () => now });
    c.set("a", 1);
    now = 99;
    expect(c.get("a")).toBe(1);
    now = 100;
    expect(c.get("a")).toBeUndefined();
  });

  it("evicts the least recently used entry past its bound", () => {
    const c = new TtlCache<number>({ ttlMs: 1000, maxEntries: 2 });
    c.set("a", 1);
    c.set("b", 2);
    c.get("a");
    c.set("c", 3);
    expect([c.get("a"), c.get("b"), c.get("c")]).toEqual([1, undefined, 3]);
    expect(c.size).toBe(2);
  });

  it("stores nothing with a TTL of 0", () => {
    const c = new TtlCache<number>({ ttlMs: 0 });
    c.set("a", 1);
    expect(c.get("a")).toBeUndefined();
  });
});
