/**
 * The names the components' argument types had before the package became a component provider
 * (docs/languages.md). Pulumi's Python SDK generator appends `Args` to every input type, so
 * `TemplateArgs` came out as `TemplateArgsArgs` there; the types were renamed, and these aliases keep
 * TypeScript programs written against the old names compiling. Only types: nothing here reaches the
 * inferred schema.
 */
import type {
  NodeSetTemplate,
  VolumeGroupSpec,
  DeviceClassSpec,
  ThinPoolSpec,
  StorageClassOptions,
  SnapshotClassOptions,
  NodeSelectorSpec,
  NodeSelectorTerm,
  NodeSelectorRequirement,
  DeviceSelector,
  DeviceSelectorTerm,
  DeviceSelectorRequirement,
} from "./spec-args";
import type {
  Toleration,
  ResourceRequirements,
  Subject,
  TopolvmSettings,
  TopolvmNodeSet,
  OperatorSettings,
} from "./lvm-system";
import type { AgentEndpoint, ClusterMode } from "./node-set";

/** @deprecated Renamed to `NodeSetTemplate`. */
export type TemplateArgs = NodeSetTemplate;

/** @deprecated Renamed to `VolumeGroupSpec`. */
export type VolumeGroupSpecArgs = VolumeGroupSpec;

/** @deprecated Renamed to `DeviceClassSpec`. */
export type DeviceClassSpecArgs = DeviceClassSpec;

/** @deprecated Renamed to `ThinPoolSpec`. */
export type ThinPoolArgs = ThinPoolSpec;

/** @deprecated Renamed to `StorageClassOptions`. */
export type StorageClassSettingsArgs = StorageClassOptions;

/** @deprecated Renamed to `SnapshotClassOptions`. */
export type SnapshotClassSettingsArgs = SnapshotClassOptions;

/** @deprecated Renamed to `NodeSelectorSpec`. */
export type NodeSelectorArgs = NodeSelectorSpec;

/** @deprecated Renamed to `NodeSelectorTerm`. */
export type NodeSelectorTermArgs = NodeSelectorTerm;

/** @deprecated Renamed to `NodeSelectorRequirement`. */
export type NodeSelectorRequirementArgs = NodeSelectorRequirement;

/** @deprecated Renamed to `DeviceSelector`. */
export type DeviceSelectorArgs = DeviceSelector;

/** @deprecated Renamed to `DeviceSelectorTerm`. */
export type DeviceSelectorTermArgs = DeviceSelectorTerm;

/** @deprecated Renamed to `DeviceSelectorRequirement`. */
export type DeviceSelectorRequirementArgs = DeviceSelectorRequirement;

/** @deprecated Renamed to `Toleration`. */
export type TolerationArgs = Toleration;

/** @deprecated Renamed to `ResourceRequirements`. */
export type ResourceRequirementsArgs = ResourceRequirements;

/** @deprecated Renamed to `Subject`. */
export type SubjectArgs = Subject;

/** @deprecated Renamed to `TopolvmSettings`. */
export type TopolvmArgs = TopolvmSettings;

/** @deprecated Renamed to `TopolvmNodeSet`. */
export type TopolvmNodeSetArgs = TopolvmNodeSet;

/** @deprecated Renamed to `OperatorSettings`. */
export type OperatorArgs = OperatorSettings;

/** @deprecated Renamed to `AgentEndpoint`. */
export type AgentEndpointArgs = AgentEndpoint;

/** @deprecated Renamed to `ClusterMode`. */
export type ClusterModeArgs = ClusterMode;
