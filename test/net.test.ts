import { freePort, freePorts } from "./net";

describe("freePort / freePorts", () => {
  it("never hands one port to two callers of a process, even after the first has closed it", async () => {
    // Sequential probes that close their listener let the kernel offer the same port again: before
    // this was guarded, 1000 calls here returned dozens of repeats.
    const ports: number[] = [];
    for (let i = 0; i < 1000; i++) ports.push(await freePort());
    ports.push(...(await freePorts(20)));
    ports.push(...(await Promise.all([freePort(), freePort(), freePort()])));
    const repeats = ports.filter((p, i) => ports.indexOf(p) !== i);
    expect(repeats).toEqual([]);
    expect(ports.every((p) => Number.isInteger(p) && p > 0 && p < 65536)).toBe(true);
  });
});
