import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { DEFAULTS, isWildcardSelector, volumeGroupSchema, type VolumeGroup as ApiVolumeGroup } from "../api";
import type { VolumeGroupSpec } from "./spec-args";
import { argsProblems, throwIfInvalid } from "./validate-args";

/** Arguments of a VolumeGroup. */
export interface VolumeGroupArgs {
  /**
   * The volume group, exactly as in a node set template.
   * @example { name: "vg-data", deviceSelector: { deviceSelectorTerms: [{ matchExpressions: [{ key: "serial", operator: "In", values: ["S4EWNX0R123456"] }] }] } }
   */
  readonly volumeGroup: VolumeGroupSpec;
}

/**
 * One volume group of a node set, as a node in the Pulumi resource tree. It registers no cluster
 * object of its own: the group is part of the LVMNodeSet's spec, and the nodes' agents build it.
 * Its outputs state what the group will do on every node, so a preview shows it at a glance.
 */
export class VolumeGroup extends pulumi.ComponentResource {
  /** The LVM volume group name on every node. */
  public readonly volumeGroupName!: pulumi.Output<string>;
  /** Devices smaller than this are excluded (the default applied). */
  public readonly minDeviceSize!: pulumi.Output<string>;
  /** True when the selector uses `Any`: the group only takes devices no other group selects. */
  public readonly wildcard!: pulumi.Output<boolean>;
  /** True when devices carrying signatures are wiped before use (forceWipeDevicesAndDestroyAllData). */
  public readonly wipesDevices!: pulumi.Output<boolean>;

  constructor(name: string, args: VolumeGroupArgs, opts?: pulumi.ComponentResourceOptions) {
    const spec = validate(name, args);
    super(VOLUME_GROUP_TYPE, name, {}, opts);
    this.volumeGroupName = pulumi.output(spec.name);
    this.minDeviceSize = pulumi.output(spec.minDeviceSize ?? DEFAULTS.minDeviceSize);
    this.wildcard = pulumi.output(isWildcardSelector(spec.deviceSelector));
    this.wipesDevices = pulumi.output(spec.forceWipeDevicesAndDestroyAllData === true);
    this.registerOutputs({
      volumeGroupName: this.volumeGroupName,
      minDeviceSize: this.minDeviceSize,
      wildcard: this.wildcard,
      wipesDevices: this.wipesDevices,
    });
  }
}

export const VOLUME_GROUP_TYPE = "pulumi-lvm:index:VolumeGroup";

const argsSchema = z.strictObject({ volumeGroup: volumeGroupSchema });

function validate(name: string, args: VolumeGroupArgs): ApiVolumeGroup {
  throwIfInvalid("VolumeGroup", name, argsProblems(argsSchema, args));
  return args.volumeGroup as ApiVolumeGroup;
}
