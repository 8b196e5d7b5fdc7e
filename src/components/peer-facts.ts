import type * as pulumi from "@pulumi/pulumi";
import type { LVMNodeSetSpec } from "../api";

/*
 * What a component tells the components that are given it as an option (Pulumi's schema inference
 * takes no component classes as args): an LvmSystem its NodeSets and its Topolvm, a NodeSet the
 * Topolvm that serves it. Kept beside the object, never in its outputs: these are the validated
 * args as the component used them at construction.
 */

/** What an LvmSystem's dependents need of it. */
export interface SystemFacts {
  /** Its component name. @example "lvm" */
  readonly name: string;
  /** Its namespace, and the Namespace object (for dependencies). */
  readonly namespace: string;
  readonly namespaceResource: pulumi.Resource;
  /** Where its agents run: lvmd and topolvm-node follow them. */
  readonly agentNodeSelector?: Readonly<Record<string, string>>;
  readonly tolerations: ReadonlyArray<object>;
  /** It installs TopoLVM itself (its deprecated `topolvm` arg). */
  readonly installsTopolvm: boolean;
}

/** What a NodeSet's Topolvm needs of it. */
export interface NodeSetFacts {
  /** Its component name. @example "edge-north" */
  readonly name: string;
  /** metadata.name of its LVMNodeSet. */
  readonly nodeSetName: string;
  readonly namespace: string;
  /** Its spec, validated. */
  readonly spec: LVMNodeSetSpec;
  /** The LvmSystem it was given as `{ system }`, if any. */
  readonly system?: pulumi.Resource;
}

const systems = new WeakMap<object, SystemFacts>();
const nodeSets = new WeakMap<object, NodeSetFacts>();

export function recordSystem(system: object, facts: SystemFacts): void {
  systems.set(system, facts);
}

/** Undefined for anything that is not an LvmSystem of this package (another copy of it included). */
export function systemFacts(system: object): SystemFacts | undefined {
  return systems.get(system);
}

export function recordNodeSet(nodeSet: object, facts: NodeSetFacts): void {
  nodeSets.set(nodeSet, facts);
}

/** Undefined for anything that is not a NodeSet of this package. */
export function nodeSetFacts(nodeSet: object): NodeSetFacts | undefined {
  return nodeSets.get(nodeSet);
}
