/**
 * The annotation on an LVMNode whose every new value makes the operator reconcile it at once (plan
 * through its agent, apply what its approvalPolicy lets through, status), instead of at the next
 * resync: for a repair someone wants now. Any value; a timestamp reads best
 * (`kubectl annotate lvmnode n1 lvm.topolvm.io/reconcile-requested-at="$(date +%s)" --overwrite`).
 * It approves nothing: a plan that waits for an approval still waits.
 */
export const RECONCILE_REQUEST_ANNOTATION = "lvm.topolvm.io/reconcile-requested-at";
