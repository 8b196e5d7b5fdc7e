import type { ValidationProblem } from "../../api";
import { GARBAGE_COLLECTORS, LVMNODE_WRITERS_MESSAGE } from "../../agent-api/admission";

/**
 * The webhook's verdict on a create or update of an LVMNode that reached it (its configuration lets
 * the operator's own writes and the garbage collector's pass without a call; the
 * ValidatingAdmissionPolicy refuses the same writes first, inside the API server): LVMNodes are the
 * operator's, made from an LVMNodeSet's template for a node it selects. A create, or a change of
 * spec or ownerReferences, by anyone else is refused — whatever the controller reference says, a
 * genuine one included: a user allowed to write LVMNodes must not choose which node a set's
 * template goes to, nor its deletionPolicy. Metadata (labels, annotations, finalizers) never reaches
 * the webhook. The garbage collector (it orphans LVMNodes) is let through should it reach it. Pure.
 */
export function lvmNodeWriteProblems(username: string | undefined): ValidationProblem[] {
  if (username && (GARBAGE_COLLECTORS as readonly string[]).includes(username)) return [];
  return [{ path: "metadata", message: LVMNODE_WRITERS_MESSAGE }];
}
