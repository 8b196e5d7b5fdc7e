export {
  convertLvmCluster,
  DEFAULT_NODE_SET_NAMESPACE,
  type Conversion,
  type ConvertOptions,
  type NotConverted,
} from "./convert";
export {
  nodeSetArgsFromLvmCluster,
  type LvmClusterNodeSet,
  type LvmClusterNodeSetArgs,
} from "./node-set-args";
export { LVMS_API_VERSION, lvmClusterSchema, type LvmCluster } from "./schema";
