/**
 * SIGTERM and SIGINT, caught from the first moment a long-running subcommand is chosen.
 *
 * Why this exists: in a container the program is PID 1, and the kernel does not deliver a signal to
 * PID 1 that it has no handler for. A handler installed only once the agent or operator has started
 * leaves a window (loading modules, reading TLS files, waiting for the API server; tens of seconds on
 * an emulated node) in which the kubelet's SIGTERM is dropped, and the pod then waits out its whole
 * grace period before SIGKILL. Catching early turns that signal into an AbortSignal the subcommand
 * checks once it has started.
 */
export interface StopSignals {
  /** Aborts at the first SIGTERM or SIGINT; its reason names the signal. */
  readonly signal: AbortSignal;
  /** Removes the handlers (tests; a process that exits does not need it). */
  dispose(): void;
}

/** The part of `process` this needs, so tests can pass an EventEmitter. */
export interface SignalSource {
  once(event: "SIGTERM" | "SIGINT", listener: () => void): unknown;
  removeListener(event: "SIGTERM" | "SIGINT", listener: () => void): unknown;
}

const STOP_SIGNALS = ["SIGTERM", "SIGINT"] as const;

export function catchStopSignals(source: SignalSource = process): StopSignals {
  const controller = new AbortController();
  const listeners = STOP_SIGNALS.map((name) => {
    const listener = () => {
      dispose();
      controller.abort(name);
    };
    source.once(name, listener);
    return [name, listener] as const;
  });
  function dispose() {
    for (const [name, listener] of listeners) source.removeListener(name, listener);
  }
  return { signal: controller.signal, dispose };
}

/** Resolves when `signal` aborts (at once when it already has). */
export function whenAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}
