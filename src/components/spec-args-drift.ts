import type { z } from "zod";
import type { capacitySchema } from "../api/capacity";
import type { deviceSelectorSchema, nodeSelectorSchema } from "../api/selectors";
import type {
  deviceClassSchema,
  snapshotClassSchema,
  storageClassSchema,
  templateSchema,
  thinPoolSchema,
  volumeGroupSchema,
} from "../api/template";
import type * as A from "./spec-args";

/*
 * A compile-time check that the components' hand-written arg interfaces (spec-args.ts, written out
 * for Pulumi's schema inference) name exactly the fields of the API's zod schemas: a field added to
 * one and not the other fails `tsc` here, naming the pair. It found deviceDiscoveryPolicy missing
 * from VolumeGroupSpec, so a NodeSet could not set it. Types only: nothing of it runs.
 */
type Same<X, Y> = [X] extends [Y] ? ([Y] extends [X] ? true : false) : false;
export const SPEC_ARGS_MATCH_THE_API: {
  volumeGroup: Same<keyof A.VolumeGroupSpec, keyof z.input<typeof volumeGroupSchema>>;
  thinPool: Same<keyof A.ThinPoolSpec, keyof z.input<typeof thinPoolSchema>>;
  storageClass: Same<keyof A.StorageClassOptions, keyof z.input<typeof storageClassSchema>>;
  snapshotClass: Same<keyof A.SnapshotClassOptions, keyof z.input<typeof snapshotClassSchema>>;
  deviceClass: Same<keyof A.DeviceClassSpec, keyof z.input<typeof deviceClassSchema>>;
  capacity: Same<keyof A.CapacitySpec, keyof z.input<typeof capacitySchema>>;
  template: Same<keyof A.NodeSetTemplate, keyof z.input<typeof templateSchema>>;
  deviceSelector: Same<keyof A.DeviceSelector, keyof z.input<typeof deviceSelectorSchema>>;
  nodeSelector: Same<keyof A.NodeSelectorSpec, keyof z.input<typeof nodeSelectorSchema>>;
} = {
  volumeGroup: true,
  thinPool: true,
  storageClass: true,
  snapshotClass: true,
  deviceClass: true,
  capacity: true,
  template: true,
  deviceSelector: true,
  nodeSelector: true,
};
