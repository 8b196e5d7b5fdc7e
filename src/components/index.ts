export * from "./device-class";
export * from "./lvm-system";
export * from "./node-set";
export * from "./spec-args";
export { Topolvm, TOPOLVM_TYPE, type TopolvmOptions, type TopolvmReleaseArgs } from "./topolvm";
export * from "./volume-group";
export { loadCrdManifests, defaultCrdDirectory } from "./crds";
export { lvmdDeviceClasses, topolvmValues } from "./topolvm-values";
export * from "./renamed-args";
