export * from "./types";
export { planNode, ACTION_ORDER, type PlanOptions } from "./plan-node";
export {
  planNodes,
  nodeSpecOf,
  DuplicateNodeError,
  type NodeSetInput,
  type PlanNodesOptions,
} from "./plan-nodes";
export { planTeardown, type TeardownOptions } from "./teardown";
export { applyPlanEffects, SimulationError } from "./simulate";
export { matchDeviceSelector, resolveDeviceName } from "./device-selector";
export { matchesNodeSelector } from "./node-selector";
export { InventoryError } from "./node-index";
export { KNAME_TAG_PREFIX } from "./ownership";
export { renderLvmdYaml, DEFAULT_LVMD_CONFIG_PATH } from "./lvmd";
export { commandText, formatPlanText, planSummary, poolText, shellQuote } from "./render";
export { canonicalJson } from "./hash";
export { recordedPlanOptions } from "./recorded-plan-options";
