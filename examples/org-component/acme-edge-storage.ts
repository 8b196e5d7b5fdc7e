import * as pulumi from "@pulumi/pulumi";
import {
  checkLVMNodeSetSpec,
  NodeSet,
  ValidationError,
  type DeviceClassSpec,
  type LvmSystem,
  type NodeSelectorSpec,
  type NodeSetTemplate,
  type TopolvmNodeSet,
  type ValidationProblem,
} from "pulumi-lvm";

/** Arguments of an AcmeEdgeStorage. */
export interface AcmeEdgeStorageArgs {
  /** The site code; names the node set and selects the site's nodes. @example "ber-01" */
  readonly site: string;
  /** Volume groups and device classes, as in pulumi-lvm, within Acme's rules. */
  readonly template: NodeSetTemplate;
  /** Narrows the site's nodes further. @default every node of the site */
  readonly nodeSelector?: NodeSelectorSpec;
}

/** Options of an AcmeEdgeStorage: Pulumi's, and the LvmSystem that serves the site (passed on to its NodeSet). */
export interface AcmeEdgeStorageOptions extends pulumi.ComponentResourceOptions {
  /** The site's LvmSystem; its topolvm.nodeSets must hold acmeNodeSet(args). */
  readonly system?: LvmSystem;
}

/**
 * Acme's edge storage: a pulumi-lvm node set for one site, with Acme's defaults (StorageClasses
 * and VolumeSnapshotClasses prefixed "acme", volumes retained when released, xfs) and guardrails:
 * Pulumi never wipes disks at Acme (new disks go through the hardware intake runbook), node sets
 * are never torn down from Pulumi (deletionPolicy Retain), and class names carry the "acme-" prefix.
 */
export class AcmeEdgeStorage extends pulumi.ComponentResource {
  /** Device class → StorageClass name. */
  public readonly storageClassNames!: pulumi.Output<Record<string, string>>;

  constructor(name: string, args: AcmeEdgeStorageArgs, opts?: AcmeEdgeStorageOptions) {
    const { name: nodeSetName, nodeSelector, template } = checkedNodeSet(`AcmeEdgeStorage "${name}"`, args);
    const { system, ...resourceOpts } = opts ?? {};
    super("acme:storage:EdgeStorage", name, {}, resourceOpts);

    const nodeSet = new NodeSet(
      `${name}-lvm`,
      { nodeSetName, labels: { "acme.com/site": args.site }, nodeSelector, template },
      // The system checks that its lvmd is configured for exactly this node set.
      { parent: this, ...(system ? { system } : {}) },
    );
    this.storageClassNames = nodeSet.storageClassNames;
    this.registerOutputs({ storageClassNames: this.storageClassNames });
  }
}

export const ACME_PREFIX = "acme";

/**
 * The node set an AcmeEdgeStorage with these args creates, as its LvmSystem's topolvm.nodeSets
 * entry: one definition for both, Acme's defaults applied. Throws on what the component would refuse.
 */
export function acmeNodeSet(args: AcmeEdgeStorageArgs): TopolvmNodeSet {
  return checkedNodeSet(`acmeNodeSet("${args.site}")`, args);
}

function checkedNodeSet(what: string, args: AcmeEdgeStorageArgs): TopolvmNodeSet {
  const template = withAcmeDefaults(args.template);
  const problems = [...guardrailProblems(args), ...apiProblems(args, template)];
  if (problems.length) throw new ValidationError(what, problems);
  return {
    name: `acme-${args.site}`,
    nodeSelector: args.nodeSelector ?? siteSelector(args.site),
    template,
  };
}

/** Acme's defaults, under what the caller set. */
export function withAcmeDefaults(template: NodeSetTemplate): NodeSetTemplate {
  return {
    ...template,
    deletionPolicy: template.deletionPolicy ?? "Retain",
    deviceClasses: (template.deviceClasses ?? []).map((dc): DeviceClassSpec => ({
      ...dc,
      fsType: dc.fsType ?? "xfs",
      storageClass: { ...acmeNaming(dc.storageClass), reclaimPolicy: "Retain", ...dc.storageClass },
      ...(dc.strategy === "Thin"
        ? {
            snapshotClass: { ...acmeNaming(dc.snapshotClass), deletionPolicy: "Retain", ...dc.snapshotClass },
          }
        : {}),
    })),
  };
}

/** The "acme" prefix, unless the caller names the object explicitly (then the name is checked). */
function acmeNaming(settings: { namingPolicy?: string } | undefined): { prefix?: string } {
  return settings?.namingPolicy === "Explicit" ? {} : { prefix: ACME_PREFIX };
}

/** Acme's rules, each problem with the path of the field that breaks it. */
export function guardrailProblems(args: AcmeEdgeStorageArgs): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  if (!/^[a-z]{3}-\d{2}$/.test(args.site ?? ""))
    problems.push({
      path: "args.site",
      message: `must be an Acme site code such as "ber-01" (got ${JSON.stringify(args.site)})`,
    });
  args.template?.volumeGroups?.forEach((vg, i) => {
    if (vg.forceWipeDevicesAndDestroyAllData)
      problems.push({
        path: `args.template.volumeGroups[${i}].forceWipeDevicesAndDestroyAllData`,
        message: "is forbidden at Acme: disks are wiped by the hardware intake runbook, never from Pulumi",
      });
  });
  if (args.template?.deletionPolicy === "Delete")
    problems.push({
      path: "args.template.deletionPolicy",
      message: 'must be "Retain" at Acme: volume groups outlive their node sets',
    });
  args.template?.deviceClasses?.forEach((dc, i) => {
    for (const kind of ["storageClass", "snapshotClass"] as const) {
      const settings = dc[kind];
      const at = `args.template.deviceClasses[${i}].${kind}`;
      if (settings?.prefix !== undefined && settings.prefix !== ACME_PREFIX)
        problems.push({
          path: `${at}.prefix`,
          message: `must be "${ACME_PREFIX}" (got ${JSON.stringify(settings.prefix)})`,
        });
      if (settings?.namingPolicy === "Explicit" && !settings.name?.startsWith(`${ACME_PREFIX}-`))
        problems.push({
          path: `${at}.name`,
          message: `must start with "${ACME_PREFIX}-" (got ${JSON.stringify(settings.name)})`,
        });
    }
  });
  return problems;
}

/** pulumi-lvm's own validation of the node set this component will create, with the same paths. */
function apiProblems(args: AcmeEdgeStorageArgs, template: NodeSetTemplate): ValidationProblem[] {
  const checked = checkLVMNodeSetSpec(
    { template, ...(args.nodeSelector ? { nodeSelector: args.nodeSelector } : {}) },
    ["args"],
  );
  return checked.ok ? [] : checked.problems;
}

function siteSelector(site: string): NodeSelectorSpec {
  return {
    nodeSelectorTerms: [{ matchExpressions: [{ key: "acme.com/site", operator: "In", values: [site] }] }],
  };
}
