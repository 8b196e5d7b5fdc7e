/**
 * pulumi-lvm: the lvm.topolvm.io/v2alpha1 API and the Pulumi components around it.
 *
 * The API's types are also under `api`: its `VolumeGroup` and `DeviceClass` types share their names
 * with the components, and at the top level the components win.
 */
export * from "./api";
export * as api from "./api";
export * from "./components";
export { DeviceClass, VolumeGroup } from "./components";
export { NodeSetDisks, type NodeResult, type NodeSetDisksArgs, type VolumeGroupResult } from "../provider";
