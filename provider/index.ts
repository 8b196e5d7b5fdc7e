export * from "./node-set-disks";
export { nodeSetDisksProvider, RUNTIME_VERSION } from "./provider";
