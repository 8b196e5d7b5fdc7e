import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { classObjectName, DEFAULTS, deviceClassSchema, type DeviceClass as ApiDeviceClass } from "../api";
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
export const TOPOLVM_PROVISIONER = "topolvm.io";
/** Kubernetes' mark of the default StorageClass. */
export const DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class";
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

/** The StorageClass for a device class, or undefined when its creationPolicy is Never. */
export function storageClassManifest(
  dc: ApiDeviceClass,
  extraLabels: Record<string, string>,
  clusterDefault = false,
) {
  const name = classObjectName(dc, dc.storageClass);
  if (name === undefined) return undefined;
  const settings = dc.storageClass ?? {};
  return {
    metadata: {
      name,
      labels: classLabels(dc, extraLabels),
      ...(clusterDefault ? { annotations: { [DEFAULT_CLASS_ANNOTATION]: "true" } } : {}),
    },
    provisioner: TOPOLVM_PROVISIONER,
    parameters: {
      ...settings.additionalParameters,
      "topolvm.io/device-class": dc.name,
      "csi.storage.k8s.io/fstype": dc.fsType ?? DEFAULTS.fsType,
    },
    reclaimPolicy: settings.reclaimPolicy ?? DEFAULTS.reclaimPolicy,
    volumeBindingMode: settings.volumeBindingMode ?? DEFAULTS.volumeBindingMode,
    allowVolumeExpansion: settings.allowVolumeExpansion ?? true,
  };
}

/** The VolumeSnapshotClass for a Thin device class, or undefined (Thick, or creationPolicy Never). */
export function snapshotClassManifest(dc: ApiDeviceClass, extraLabels: Record<string, string>) {
  if (dc.strategy !== "Thin") return undefined;
  const name = classObjectName(dc, dc.snapshotClass);
  if (name === undefined) return undefined;
  const settings = dc.snapshotClass ?? {};
  return {
    apiVersion: "snapshot.storage.k8s.io/v1",
    kind: "VolumeSnapshotClass",
    metadata: { name, labels: classLabels(dc, extraLabels) },
    driver: TOPOLVM_PROVISIONER,
    deletionPolicy: settings.deletionPolicy ?? "Delete",
    ...(settings.additionalParameters ? { parameters: settings.additionalParameters } : {}),
  };
}

function classLabels(dc: ApiDeviceClass, extra: Record<string, string>): Record<string, string> {
  return { ...extra, "app.kubernetes.io/part-of": "pulumi-lvm", "lvm.topolvm.io/device-class": dc.name };
}
