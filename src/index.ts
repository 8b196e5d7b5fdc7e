/**
 * pulumi-lvm: the lvm.topolvm.io/v2alpha1 API and the Pulumi components around it.
 *
 * At the top level, `VolumeGroup` and `DeviceClass` are the components. The API's types of the same
 * names (a template's volume group and device class, as validated) are `api.VolumeGroup` and
 * `api.DeviceClass`; the components' args types `VolumeGroupSpec` and `DeviceClassSpec` have their
 * shape. Every other name of the API is also exported here, as before.
 */
export * as api from "./api";
export * from "./api/conditions";
export * from "./api/defaults";
export * from "./api/errors";
export * from "./api/lvmnode";
export * from "./api/lvmnodeset";
export * from "./api/names";
export * from "./api/objectmeta";
export * from "./api/quantity";
export * from "./api/rules";
export * from "./api/selectors";
export * from "./api/validate";
// The template module without its VolumeGroup and DeviceClass types (see above).
export {
  CREATION_POLICIES,
  DELETION_POLICIES,
  EVEN_WITH_FIELD_ERRORS,
  FS_TYPES,
  NAMING_POLICIES,
  STRATEGIES,
  checkTemplate,
  deviceClassSchema,
  snapshotClassSchema,
  storageClassSchema,
  templateCelRules,
  templateFields,
  templateSchema,
  thinPoolSchema,
  volumeGroupSchema,
  type DeletionPolicy,
  type SnapshotClassSettings,
  type StorageClassSettings,
  type Template,
  type ThinPool,
} from "./api/template";
export * from "./components";
export { NodeSetDisks, type NodeResult, type NodeSetDisksArgs, type VolumeGroupResult } from "../provider";
// Moving from LVMS: an LVMCluster (v1alpha1) as LVMNodeSets or NodeSet args (docs/migration.md).
export {
  convertLvmCluster,
  nodeSetArgsFromLvmCluster,
  type Conversion,
  type ConvertOptions,
  type LvmClusterNodeSet,
  type LvmClusterNodeSetArgs,
  type NotConverted,
} from "./migrate/lvms-v1";
