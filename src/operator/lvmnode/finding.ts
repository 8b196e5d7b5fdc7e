import type { SyncOutcome, TeardownOutcome } from "../agents/outcome";
import type { NotDrivenReason } from "../mandate";

/** What one LVMNode reconcile found, for its status. */
export type NodeFinding =
  /** The spec breaks rules the CRD cannot express: nothing was sent to the agent. */
  | { readonly kind: "invalid"; readonly problems: readonly string[] }
  | Exclude<SyncOutcome, { kind: "stopped" }>
  /** The operator has no mandate for this LVMNode (mandate.ts mandateOf): nothing was sent. */
  | {
      readonly kind: "notDriven";
      readonly reason: NotDrivenReason;
      readonly message: string;
    }
  /** The LVMNode is being deleted with deletionPolicy Delete and its teardown is not done. */
  | {
      readonly kind: "teardown";
      readonly outcome: Exclude<TeardownOutcome, { kind: "busy" | "stopped" | "tornDown" }>;
    };
