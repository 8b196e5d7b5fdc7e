import { guestStoppedAnswering } from "../vm/guest";

/**
 * Runs `boot`, and once more when it failed because the guest stopped answering
 * (guestStoppedAnswering: the emulator starved, not anything under test). The second boot is said on
 * stderr with the first failure, and its duration is recorded as `timings.rebootedAfterGuestHang`.
 * Any other failure, or a second hang, is thrown as it is. `boot` tears down what it started when it
 * fails (startCluster's bootCluster does).
 */
export async function bootOnceMoreIfGuestHung<
  T extends { readonly timings: Readonly<Record<string, number>> },
>(
  boot: () => Promise<T>,
  say: (text: string) => void = (text) => console.error(text),
  now: () => number = Date.now,
): Promise<T> {
  try {
    return await boot();
  } catch (e) {
    if (!guestStoppedAnswering(e)) throw e;
    say(
      `startCluster: THE GUEST STOPPED ANSWERING while the node came up; tearing down and booting once more.\n` +
        `first failure:\n${(e as Error).message}`,
    );
    const again = now();
    const booted = await boot();
    return { ...booted, timings: { ...booted.timings, rebootedAfterGuestHang: now() - again } };
  }
}
