import { ValidationError } from "../../api/errors";
import type { NodeSetArgs } from "../../components/node-set";
import { convertLvmCluster, type ConvertOptions, type NotConverted } from "./convert";

/** One NodeSet to construct: its component name (the LVMNodeSet's name) and its args. */
export interface LvmClusterNodeSet {
  readonly name: string;
  readonly args: NodeSetArgs;
}

export interface LvmClusterNodeSetArgs {
  readonly nodeSets: LvmClusterNodeSet[];
  /** What was not carried over, by field path, and why (as `pulumi-lvm convert` prints it). */
  readonly notConverted: NotConverted[];
}

/**
 * For a Pulumi program moving from LVMS: an LVMCluster object (v1alpha1, as `kubectl get -o yaml`
 * prints it, parsed) as the args of the NodeSets that replace it, one per combination of device
 * classes that share nodes (convertLvmCluster). The set that creates the default class's StorageClass
 * gets `defaultStorageClass: true`, as LVMS marked it. Throws a ValidationError, by field path, for an
 * object it cannot read or convert.
 *
 *   const { nodeSets, notConverted } = nodeSetArgsFromLvmCluster(YAML.parse(fs.readFileSync("lvmcluster.yaml", "utf8")));
 *   for (const n of notConverted) pulumi.log.warn(`${n.path}: ${n.reason}`);
 *   for (const { name, args } of nodeSets) new NodeSet(name, args, { system });
 */
export function nodeSetArgsFromLvmCluster(
  lvmCluster: unknown,
  options: ConvertOptions = {},
): LvmClusterNodeSetArgs {
  const conversion = convertLvmCluster(lvmCluster, options);
  if (!conversion.ok) throw new ValidationError(`LVMCluster ${nameOf(lvmCluster)}`, conversion.problems);
  const nodeSets = conversion.nodeSets.map(({ metadata, spec }) => {
    const marksDefault = (spec.template.deviceClasses ?? []).some(
      (dc) => dc.default === true && dc.storageClass?.creationPolicy !== "Never",
    );
    const args = {
      nodeSetName: metadata.name,
      ...(metadata.namespace ? { namespace: metadata.namespace } : {}),
      ...(spec.nodeSelector ? { nodeSelector: spec.nodeSelector } : {}),
      template: spec.template,
      ...(marksDefault ? { defaultStorageClass: true } : {}),
    } as NodeSetArgs;
    return { name: metadata.name, args };
  });
  return { nodeSets, notConverted: conversion.notConverted };
}

function nameOf(input: unknown): string {
  const name = (input as { metadata?: { name?: unknown } } | undefined)?.metadata?.name;
  return typeof name === "string" && name ? name : "(unnamed)";
}
