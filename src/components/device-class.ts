import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { classObjectName, deviceClassSchema, type DeviceClass as ApiDeviceClass } from "../api";
import { snapshotClassManifest, storageClassManifest } from "../api/class-objects";
import type { DeviceClassSpec } from "./spec-args";
import { argsProblems, labels, throwIfInvalid } from "./validate-args";

/** Arguments of a DeviceClass. */
export interface DeviceClassArgs {
  /**
   * The device class, exactly as in a node set template.
   * @example { name: "fast", strategy: "Thin", volumeGroup: "vg-data", thin: { poolName: "pool0", sizePercent: 90, overprovisionRatio: 10 } }
   */
  readonly deviceClass: DeviceClassSpec;
  /** Labels added to the StorageClass and VolumeSnapshotClass. @default {} @example { team: "platform" } */
  readonly labels?: Record<string, string>;
  /**
   * Mark its StorageClass as the cluster's default (annotation
   * `storageclass.kubernetes.io/is-default-class: "true"`), as LVMS does for its default device class:
   * claims without a storageClassName get it. Keep it to one class of the cluster.
   * @default false
   */
  readonly clusterDefault?: boolean;
}

/**
 * A TopoLVM device class's Kubernetes objects: its StorageClass and, for strategy Thin, its
 * VolumeSnapshotClass (TopoLVM snapshots are thin snapshots), named by the API's naming policy;
 * none of them when the policy's creationPolicy is Never. The volumes themselves come from the
 * LVMNodeSet the class belongs to; NodeSet creates one DeviceClass per template entry.
 */
export class DeviceClass extends pulumi.ComponentResource {
  /** The TopoLVM device class name. */
  public readonly deviceClassName!: pulumi.Output<string>;
  /** The StorageClass name; absent when storageClass.creationPolicy is Never. */
  public readonly storageClassName?: pulumi.Output<string>;
  /** The VolumeSnapshotClass name; absent for Thick and when snapshotClass.creationPolicy is Never. */
  public readonly snapshotClassName?: pulumi.Output<string>;

  constructor(name: string, args: DeviceClassArgs, opts?: pulumi.ComponentResourceOptions) {
    const spec = validate(name, args);
    super(DEVICE_CLASS_TYPE, name, {}, opts);
    const childOpts = { parent: this, dependsOn: opts?.dependsOn };

    const storageClass = storageClassManifest(spec, args.labels ?? {}, args.clusterDefault ?? false);
    if (storageClass) {
      // A StorageClass's provisioner, parameters, reclaimPolicy and volumeBindingMode cannot be
      // changed in place; changing one replaces it, deleting first because the name stays the same.
      // Bound volumes keep working: a PersistentVolume does not need its class to exist.
      const sc = new k8s.storage.v1.StorageClass(`${name}-storage-class`, storageClass, {
        ...childOpts,
        replaceOnChanges: [...STORAGE_CLASS_IMMUTABLE_FIELDS],
        deleteBeforeReplace: true,
      });
      this.storageClassName = sc.metadata.name;
    }
    const snapshotClass = snapshotClassManifest(spec, args.labels ?? {});
    if (snapshotClass) {
      const vsc = new k8s.apiextensions.CustomResource(`${name}-snapshot-class`, snapshotClass, childOpts);
      this.snapshotClassName = vsc.metadata.name;
    }
    this.deviceClassName = pulumi.output(spec.name);
    this.registerOutputs({
      deviceClassName: this.deviceClassName,
      storageClassName: this.storageClassName,
      snapshotClassName: this.snapshotClassName,
    });
  }
}

export const DEVICE_CLASS_TYPE = "pulumi-lvm:index:DeviceClass";
// The objects' manifests are the API's (the operator creates the same ones for sets applied without Pulumi).
export {
  CLASSES_MANAGED_BY_ANNOTATION,
  DEFAULT_CLASS_ANNOTATION,
  snapshotClassManifest,
  storageClassManifest,
  TOPOLVM_PROVISIONER,
} from "../api/class-objects";
export const STORAGE_CLASS_IMMUTABLE_FIELDS = [
  "provisioner",
  "parameters",
  "reclaimPolicy",
  "volumeBindingMode",
] as const;

const argsSchema = z.strictObject({
  deviceClass: deviceClassSchema,
  labels: labels.optional(),
  clusterDefault: z.boolean().optional(),
});

function validate(name: string, args: DeviceClassArgs): ApiDeviceClass {
  const problems = argsProblems(argsSchema, args);
  if (
    !problems.length &&
    args.clusterDefault &&
    classObjectName(
      args.deviceClass as ApiDeviceClass,
      args.deviceClass.storageClass as ApiDeviceClass["storageClass"],
    ) === undefined
  )
    problems.push({
      path: "args.clusterDefault",
      message: "is true, but the class creates no StorageClass (storageClass.creationPolicy Never)",
    });
  throwIfInvalid("DeviceClass", name, problems);
  return args.deviceClass as ApiDeviceClass;
}
