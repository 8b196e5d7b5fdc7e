import type { Condition } from "../api";
import type { DesiredCondition } from "./conditions";

export const READY = "Ready";

/**
 * The top-level `Ready` condition of both kinds, for tools that follow kstatus (kubectl wait,
 * Argo CD, Flux, Pulumi's await): they read `Ready` and compare its observedGeneration with
 * metadata.generation. It is a summary of the object's other conditions, pure:
 *
 * - the first other condition that is False makes Ready False, with that condition's reason and
 *   `<Type>: <message>` (so `kubectl get` shows why without reading the rest);
 * - else the first that is Unknown makes Ready Unknown, the same way;
 * - else, when a state is given (an LVMNode's `status.state`) and it is not Ready: False, reason
 *   the state (`Pending`, `Progressing`, `Degraded`, ...);
 * - else True, reason `Ready`, message `okMessage`.
 *
 * `order` is the order the conditions are judged in (the most telling first); conditions not
 * present are skipped, so an owner that never writes its condition (ProviderReady today) neither
 * blocks nor counts. Types not in `order` are ignored.
 */
export function readyCondition(input: {
  readonly conditions: readonly Condition[];
  readonly order: readonly string[];
  readonly state?: string;
  readonly generation: number;
  readonly okMessage: string;
}): DesiredCondition {
  const { conditions, order, state, generation } = input;
  const present = order.flatMap((type) => conditions.filter((c) => c.type === type && c.type !== READY));
  const blocking = present.find((c) => c.status === "False") ?? present.find((c) => c.status === "Unknown");
  const base = { type: READY, observedGeneration: generation };
  if (blocking)
    return {
      ...base,
      status: blocking.status,
      reason: blocking.reason ?? `${blocking.type}${blocking.status}`,
      message: `${blocking.type}: ${blocking.message ?? blocking.reason ?? blocking.status}`,
    };
  if (state !== undefined && state !== "Ready")
    return { ...base, status: "False", reason: state, message: `state is ${state}` };
  return { ...base, status: "True", reason: "Ready", message: input.okMessage };
}
