import type { z } from "zod";
import { formatPath, problemsFrom, type ValidationProblem } from "../../api/errors";
import { GROUP_VERSION, type LVMNodeSet } from "../../api/lvmnodeset";
import type { DeviceClass, VolumeGroup } from "../../api/template";
import { checkLVMNodeSet, problemLine } from "../../api/validate";
import { nodeCells } from "./node-cells";
import { lvmClusterSchema, type LvmCluster, type LvmsDeviceClass } from "./schema";

/**
 * LVMS's LVMCluster (v1alpha1) as LVMNodeSets (v2alpha1). Pure: no I/O. Every device class becomes a
 * volume group and a device class of the same name (LVMS names the volume group after the class), so
 * the StorageClasses and VolumeSnapshotClasses keep LVMS's names, `lvms-<class>`, and TopoLVM's
 * existing LogicalVolumes keep their device class. Whatever has no equivalent is returned in
 * `notConverted` with its field path and the reason: nothing is dropped unseen.
 */

/** Something of the LVMCluster that is not carried over as it was, and why. */
export interface NotConverted {
  /** The field path in the LVMCluster, e.g. `spec.storage.deviceClasses[0].raidConfig`. */
  readonly path: string;
  readonly reason: string;
}

export interface ConvertOptions {
  /**
   * The namespace of the LVMNodeSets: the LvmSystem's, which its operator watches.
   * @default "lvm-system"
   */
  readonly namespace?: string;
}

export type Conversion =
  | {
      readonly ok: true;
      /** The LVMCluster's name. */
      readonly name: string;
      /** One set when the classes share a node selector; otherwise one per combination of classes. */
      readonly nodeSets: LVMNodeSet[];
      readonly notConverted: NotConverted[];
    }
  /** The input is not an LVMCluster we can read, or its result would not be valid. */
  | { readonly ok: false; readonly problems: ValidationProblem[] };

export const DEFAULT_NODE_SET_NAMESPACE = "lvm-system";
/** LVMS's defaults (its API): thin pool size, Static chunk size, Static metadata size. */
const LVMS_SIZE_PERCENT = 90;
const LVMS_CHUNK_SIZE = "128Ki";
const LVMS_METADATA_SIZE = "1Gi";

export function convertLvmCluster(input: unknown, options: ConvertOptions = {}): Conversion {
  const parsed = parseLvmCluster(input);
  if (!parsed.ok) return parsed;
  const { cluster, unknown } = parsed;
  const notes: NotConverted[] = [...unknown];
  const note = (path: readonly PropertyKey[], reason: string) =>
    notes.push({ path: formatPath(path), reason });
  const classes = cluster.spec?.storage?.deviceClasses ?? [];
  if (classes.length === 0)
    return {
      ok: false,
      problems: [
        { path: "spec.storage.deviceClasses", message: "has no device classes: nothing to convert" },
      ],
    };

  metadataNotes(cluster, note);
  if (cluster.spec?.tolerations?.length)
    note(
      ["spec", "tolerations"],
      "an LVMNodeSet has no tolerations: give them to the LvmSystem (its `tolerations` arg), which puts the agents and TopoLVM's node pods on tainted nodes",
    );
  const converted = classes.map((dc, i) => convertClass(dc, ["spec", "storage", "deviceClasses", i], note));

  const split = nodeCells(classes.map((dc) => dc.nodeSelector));
  if ("problems" in split)
    return {
      ok: false,
      problems: split.problems.map((p) => ({
        path: formatPath(["spec", "storage", "deviceClasses", p.classIndex, "nodeSelector"]),
        message: p.message,
      })),
    };
  const cells = split.cells;

  const namespace = options.namespace ?? DEFAULT_NODE_SET_NAMESPACE;
  const name = cluster.metadata.name;
  const created = new Set<number>();
  const nodeSets = cells.map((cell): LVMNodeSet => {
    const setName =
      cells.length === 1 ? name : [name, ...cell.classes.map((i) => classes[i]!.name)].join("-");
    const deviceClasses = cell.classes.map((i) => {
      const dc = converted[i]!.deviceClass;
      if (!created.has(i)) {
        created.add(i);
        return dc;
      }
      // Several sets hold this class; the first one creates its StorageClass (and snapshot class).
      return {
        ...dc,
        storageClass: { ...dc.storageClass, creationPolicy: "Never" as const },
        ...(dc.strategy === "Thin" ? { snapshotClass: { creationPolicy: "Never" as const } } : {}),
      };
    });
    return {
      apiVersion: GROUP_VERSION,
      kind: "LVMNodeSet",
      metadata: { name: setName, namespace },
      spec: {
        ...(cell.nodeSelector ? { nodeSelector: cell.nodeSelector } : {}),
        template: {
          volumeGroups: cell.classes.map((i) => converted[i]!.volumeGroup),
          deviceClasses,
          deletionPolicy: "Retain",
        },
      },
    };
  });

  const problems = nodeSets.flatMap((set) => {
    const checked = checkLVMNodeSet(set);
    return checked.ok
      ? []
      : checked.problems.map((p) => ({
          path: "spec.storage.deviceClasses",
          message: `the converted ${problemLine("LVMNodeSet", set.metadata.name, p)}`,
        }));
  });
  if (problems.length) return { ok: false, problems };
  return { ok: true, name, nodeSets, notConverted: notes };
}

/* ---------------------------------------------------------------------------- one class ---- */

type Note = (path: readonly PropertyKey[], reason: string) => void;

function convertClass(
  dc: LvmsDeviceClass,
  at: readonly PropertyKey[],
  note: Note,
): { volumeGroup: VolumeGroup; deviceClass: DeviceClass } {
  const selector = dc.deviceSelector;
  const paths = [...(selector?.paths ?? []), ...(selector?.optionalPaths ?? [])];
  if (selector?.paths?.length)
    note(
      [...at, "deviceSelector", "paths"],
      'LVMS refuses a node where one of these paths is missing; here a missing path is listed as excluded ("was not found") in the plan and the LVMNode\'s status, and the group is built from the paths found',
    );
  if (paths.length === 0)
    note(
      [...at, "deviceSelector"],
      "not set: LVMS takes every unused disk; converted to `kname Any`, which takes every device of at least 1Gi that holds no signature and that no other volume group selects. Check the plan: list the disks by path to keep the group to them",
    );
  if (selector?.forceWipeDevicesAndDestroyAllData && paths.length === 0)
    note(
      [...at, "deviceSelector", "forceWipeDevicesAndDestroyAllData"],
      "not carried over without paths: on the `kname Any` wildcard it would wipe every disk with a signature that no other group selects. List the disks to wipe in paths",
    );
  if (dc.deviceDiscoveryPolicy === "Static")
    note(
      [...at, "deviceDiscoveryPolicy"],
      "Static has no equivalent: a device the selector matches joins the group whenever it appears (LVMS's Dynamic). List the disks by path to keep the group to the ones it has",
    );
  if (!dc.nodeSelector)
    note(
      [...at, "nodeSelector"],
      "not set: LVMS takes the nodes without a NoSchedule taint that spec.tolerations does not tolerate; an LVMNodeSet without a nodeSelector takes every node, tainted or not. Add a nodeSelector if tainted nodes (such as the control plane) must be left out",
    );
  const volumeGroup: VolumeGroup = {
    name: dc.name,
    deviceSelector: {
      deviceSelectorTerms: [
        {
          matchExpressions: [
            paths.length ? { key: "path", operator: "In", values: paths } : { key: "kname", operator: "Any" },
          ],
        },
      ],
    },
    ...(selector?.forceWipeDevicesAndDestroyAllData && paths.length
      ? { forceWipeDevicesAndDestroyAllData: true }
      : {}),
  };

  const options = dc.storageClassOptions;
  if (options?.additionalLabels && Object.keys(options.additionalLabels).length)
    note(
      [...at, "storageClassOptions", "additionalLabels"],
      "a device class has no labels of its own: the set's labels (the NodeSet's `labels` arg) go on every StorageClass of the set",
    );
  if (dc.default)
    note(
      [...at, "default"],
      "kept as the set's default class; an LVMNodeSet applied without Pulumi does not mark its StorageClass as the cluster's default (LVMS did): keep the annotation on the existing StorageClass, or use the NodeSet component with `defaultStorageClass: true` (nodeSetArgsFromLvmCluster sets it)",
    );
  const storageClass = {
    ...(options?.reclaimPolicy ? { reclaimPolicy: options.reclaimPolicy } : {}),
    ...(options?.volumeBindingMode ? { volumeBindingMode: options.volumeBindingMode } : {}),
    ...(options?.additionalParameters && Object.keys(options.additionalParameters).length
      ? { additionalParameters: options.additionalParameters }
      : {}),
  };
  const common = {
    name: dc.name,
    volumeGroup: dc.name,
    ...(dc.default ? { default: true } : {}),
    ...(dc.fstype ? { fsType: dc.fstype } : {}),
    ...(Object.keys(storageClass).length ? { storageClass } : {}),
  };
  if (dc.raidConfig) {
    note(
      [...at, "raidConfig"],
      "LVM RAID has no equivalent: the class is converted as Thick, so new volumes are linear, not RAID (volumes that exist stay as they are). Keep such classes on LVMS, or move their data to a class you accept",
    );
  }
  if (!dc.thinPoolConfig) return { volumeGroup, deviceClass: { ...common, strategy: "Thick" } };
  return {
    volumeGroup,
    deviceClass: {
      ...common,
      strategy: "Thin",
      thin: thinPool(dc.thinPoolConfig, [...at, "thinPoolConfig"], note),
    },
  };
}

function thinPool(
  t: NonNullable<LvmsDeviceClass["thinPoolConfig"]>,
  at: readonly PropertyKey[],
  note: Note,
): NonNullable<DeviceClass["thin"]> {
  const chunkPolicy = t.chunkSizeCalculationPolicy ?? "Static";
  const metadataPolicy = t.metadataSizeCalculationPolicy ?? "Host";
  if (chunkPolicy === "Host" && t.chunkSize !== undefined)
    note(
      [...at, "chunkSize"],
      "ignored with chunkSizeCalculationPolicy Host (as LVMS ignores it): lvm2 chooses",
    );
  if (metadataPolicy === "Host" && t.metadataSize !== undefined)
    note(
      [...at, "metadataSize"],
      "ignored with metadataSizeCalculationPolicy Host (as LVMS ignores it): lvm2 chooses",
    );
  return {
    poolName: t.name,
    sizePercent: t.sizePercent ?? LVMS_SIZE_PERCENT,
    overprovisionRatio: t.overprovisionRatio,
    ...(chunkPolicy === "Static" ? { chunkSize: String(t.chunkSize ?? LVMS_CHUNK_SIZE) } : {}),
    ...(metadataPolicy === "Static" ? { metadataSize: String(t.metadataSize ?? LVMS_METADATA_SIZE) } : {}),
  };
}

/* ------------------------------------------------------------------------------ parsing ---- */

/** Metadata the API server keeps for itself: not configuration, not reported. */
const SERVER_METADATA = new Set([
  "name",
  "namespace",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "managedFields",
  "finalizers",
  "ownerReferences",
  "selfLink",
]);

function metadataNotes(cluster: LvmCluster, note: Note): void {
  const meta = cluster.metadata as Record<string, unknown>;
  for (const key of Object.keys(meta).sort()) {
    if (SERVER_METADATA.has(key)) continue;
    const value = meta[key];
    if (value && typeof value === "object" && Object.keys(value).length === 0) continue;
    note(
      ["metadata", key],
      "not copied to the LVMNodeSets: add what you need to their metadata (or the NodeSet's `labels`)",
    );
  }
  if (cluster.metadata.namespace)
    note(
      ["metadata", "namespace"],
      "LVMNodeSets live in the LvmSystem's namespace (--namespace), not LVMS's",
    );
}

/**
 * The LVMCluster typed, and its fields the schema does not know (each listed, then left out so the
 * rest can be converted). Any other problem (a wrong type, a missing required field) fails.
 */
function parseLvmCluster(
  input: unknown,
): { ok: true; cluster: LvmCluster; unknown: NotConverted[] } | { ok: false; problems: ValidationProblem[] } {
  const first = lvmClusterSchema.safeParse(input, { reportInput: true });
  if (first.success) return { ok: true, cluster: first.data, unknown: [] };
  const unknownIssues = first.error.issues.filter(
    (i): i is z.core.$ZodIssueUnrecognizedKeys => i.code === "unrecognized_keys",
  );
  const unknown = unknownIssues.flatMap((i) =>
    i.keys.map((key) => ({
      path: formatPath([...i.path, key]),
      reason: "not a field of LVMCluster v1alpha1 that this converter knows: not converted",
    })),
  );
  const trimmed = structuredClone(input) as Record<string, unknown>;
  for (const i of unknownIssues) {
    const parent = i.path.reduce<unknown>(
      (o, k) => (o as Record<PropertyKey, unknown>)[k],
      trimmed,
    ) as Record<string, unknown>;
    for (const key of i.keys) delete parent[key];
  }
  const second = lvmClusterSchema.safeParse(trimmed, { reportInput: true });
  if (!second.success) return { ok: false, problems: problemsFrom(second.error) };
  return { ok: true, cluster: second.data, unknown };
}
