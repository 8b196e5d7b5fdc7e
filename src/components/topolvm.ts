import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { ValidationProblem } from "../api";
import type { LvmSystem } from "./lvm-system";
import type { NodeSet } from "./node-set";
import { deletionGuard } from "../agent-api/admission";
import { withDependencies } from "./depends-on";
import { nodeSetFacts, systemFacts, type NodeSetFacts, type SystemFacts } from "./peer-facts";
import { topolvmReleaseArgsSchema } from "./topolvm-args";
import { chartSourceProblems, topolvmChartSource } from "./topolvm-chart";
import { planTopolvm, type TopolvmPlan } from "./topolvm-values";
import { argsProblems, throwIfInvalid } from "./validate-args";

/** Arguments of a Topolvm: which chart, and extra values. Where lvmd runs comes from the node sets. */
export interface TopolvmReleaseArgs {
  /** The chart version, pinned (upgrades are deliberate); 11.5.0 or later. @example "15.7.1" */
  readonly chartVersion: string;
  /** The Helm release name. @default "topolvm" */
  readonly releaseName?: string;
  /**
   * The chart repository; point it at a mirror on air-gapped sites: an HTTP chart repository, or an
   * OCI registry path under which the chart is `topolvm`. Not with chartPath.
   * @default "https://topolvm.github.io/topolvm"
   * @example "oci://registry.example.com/charts"
   */
  readonly repository?: string;
  /**
   * TopoLVM's chart on local disk instead of a repository: a chart directory, whose Chart.yaml must
   * be TopoLVM's chart at exactly chartVersion, or a packaged chart (.tgz). Not with repository.
   * @default none (the chart comes from `repository`)
   * @example "./charts/topolvm"
   */
  readonly chartPath?: string;
  /**
   * Extra chart values. Where lvmd and topolvm-node run, lvmd's classes and socket, and the chart's
   * StorageClasses are derived (a value for one of them is an error); lvmd.lvcreateOptionClasses and
   * lvmd.additionalLVMDYamlContent go to every node set's lvmd.
   * @default {}
   * @example { "cert-manager": { enabled: true } }
   */
  // Free-form Helm values: Pulumi's schema inference maps `any` (not `unknown`) to its Any type.
  readonly values?: { [key: string]: any }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * Options of a Topolvm: Pulumi's resource options, the system it is installed into and the node sets
 * it serves. Options, not args: Pulumi's schema inference takes no component classes as args.
 */
export interface TopolvmOptions extends pulumi.ComponentResourceOptions {
  /** The LvmSystem whose namespace TopoLVM is installed into; lvmd and topolvm-node follow its agents. */
  readonly system: LvmSystem;
  /**
   * Every NodeSet of the system, each declared once: each gets its own lvmd with exactly its device
   * classes, on exactly the nodes it selects and no other node set selects.
   * @example [edgeNorth, edgeSouth]
   */
  readonly nodeSets: NodeSet[];
}

/**
 * TopoLVM from its official Helm chart, configured from the NodeSets it is given (docs/components.md,
 * "TopoLVM and lvmd"): one lvmd per node set, on its nodes. Its children: the Chart, and the label
 * `topolvm.io/webhook: ignore` on the system's namespace (a NamespacePatch). It depends on the node
 * sets, so a new volume group or thin pool exists (where Pulumi applies it) before lvmd restarts
 * with its class.
 */
export class Topolvm extends pulumi.ComponentResource {
  /** The Helm release name. */
  public readonly releaseName!: pulumi.Output<string>;

  constructor(name: string, args: TopolvmReleaseArgs, opts: TopolvmOptions) {
    const { system, nodeSets, ...resourceOpts } = opts ?? ({} as TopolvmOptions);
    const { plan, facts } = validate(name, args, system, nodeSets);
    // A child of the stack (or of `parent`), never of the system: NodeSets depend on the system, a
    // dependency on a component waits for its children, and this waits for the NodeSets.
    super(
      TOPOLVM_TYPE,
      name,
      {},
      {
        ...resourceOpts,
        dependsOn: withDependencies(resourceOpts.dependsOn, [facts.namespaceResource, ...nodeSets]),
      },
    );
    // A node that two node sets select belongs to neither: the agents leave it alone, and it runs no lvmd.
    // pulumi.log.warn's promise never rejects (an undelivered line goes to stderr): nothing to wait for.
    for (const [a, b] of plan.overlaps)
      void pulumi.log.warn(
        `node sets "${a}" and "${b}" may select the same nodes; a node both select gets neither's volume groups and runs no lvmd`,
        this,
      );
    // TopoLVM's pod webhook must not act on its own namespace.
    const label = new k8s.core.v1.NamespacePatch(
      `${name}-namespace`,
      { metadata: { name: facts.namespace, labels: { "topolvm.io/webhook": "ignore" } } },
      { parent: this },
    );
    const release = args.releaseName ?? "topolvm";
    const chart = new k8s.helm.v4.Chart(
      name,
      { ...topolvmChartSource(args), name: release, namespace: facts.namespace, values: plan.values },
      {
        parent: this,
        dependsOn: [label],
        // Where LvmSystem's deprecated `topolvm` arg put it: existing stacks keep their release.
        aliases: [{ name: `${facts.name}-topolvm`, parent: system }],
      },
    );
    // `pulumi destroy` would remove TopoLVM before the node sets (this depends on them): a set with
    // deletionPolicy Delete whose volume groups still hold volumes would then be refused with
    // nobody left to remove a volume once its PVC is deleted. The guard depends on the chart, so it
    // is deleted first, and the operator's webhook refuses that while those volumes exist.
    const guarded = nodeSets
      .flatMap((n) => nodeSetFacts(n) ?? [])
      .filter((set) => set.spec.template.deletionPolicy === "Delete")
      .map((set) => set.nodeSetName);
    if (guarded.length)
      new k8s.core.v1.ConfigMap(
        `${name}-deletion-guard`,
        deletionGuard({ name: `${release}-deletion-guard`, namespace: facts.namespace, nodeSets: guarded }),
        // The chart's every object, not just the chart: a v4 Chart is a component of the provider's,
        // whose children a dependency on it might not reach on destroy.
        { parent: this, dependsOn: chart.resources.apply((objects) => [chart, ...(objects ?? [])]) },
      );
    this.releaseName = pulumi.output(release);
    this.registerOutputs({ releaseName: this.releaseName });
  }
}

export const TOPOLVM_TYPE = "pulumi-lvm:index:Topolvm";

function validate(
  name: string,
  args: TopolvmReleaseArgs,
  system: LvmSystem | undefined,
  nodeSets: readonly NodeSet[] | undefined,
): { plan: TopolvmPlan; facts: SystemFacts } {
  const facts = system && systemFacts(system);
  if (!facts)
    throw new Error(
      `Topolvm "${name}" needs its LvmSystem as the option \`system\` (new Topolvm(name, args, { system, nodeSets })); other languages than TypeScript cannot pass it: use LvmSystem's topolvm arg there`,
    );
  const problems: ValidationProblem[] = [...argsProblems(topolvmReleaseArgsSchema, args ?? {})];
  if (facts.installsTopolvm)
    problems.push({
      path: "opts.system",
      message: `LvmSystem "${facts.name}" already installs TopoLVM from its topolvm arg: give the node sets to one of them`,
    });
  const sets = nodeSetProblems(nodeSets, system!, facts, problems);
  if (problems.length === 0) problems.push(...chartSourceProblems(args, "args"));
  throwIfInvalid("Topolvm", name, problems);
  const plan = planTopolvm(
    {
      nodeSets: sets.map((set) => ({
        name: set.nodeSetName,
        ...(set.spec.nodeSelector ? { nodeSelector: set.spec.nodeSelector } : {}),
        deviceClasses: set.spec.template.deviceClasses ?? [],
      })),
      ...(facts.agentNodeSelector ? { agentNodeSelector: facts.agentNodeSelector } : {}),
      tolerations: facts.tolerations as ReadonlyArray<Readonly<Record<string, unknown>>>,
      values: args.values ?? {},
    },
    "args",
  );
  // planTopolvm names a node set by its index in `args.nodeSets`: here they are the option's.
  throwIfInvalid(
    "Topolvm",
    name,
    plan.problems.map((p) => ({ ...p, path: p.path.replace(/^args\.nodeSets/, "opts.nodeSets") })),
  );
  return { plan, facts };
}

/** The node sets' facts; a problem for anything that is not a NodeSet of this system's namespace. */
function nodeSetProblems(
  nodeSets: readonly NodeSet[] | undefined,
  system: LvmSystem,
  facts: SystemFacts,
  problems: ValidationProblem[],
): NodeSetFacts[] {
  if (!Array.isArray(nodeSets) || nodeSets.length === 0) {
    problems.push({ path: "opts.nodeSets", message: "must list the system's NodeSets (at least one)" });
    return [];
  }
  return nodeSets.flatMap((nodeSet, i) => {
    const set = nodeSetFacts(nodeSet);
    const at = `opts.nodeSets[${i}]`;
    if (!set) {
      problems.push({ path: at, message: "is not a NodeSet" });
      return [];
    }
    if (set.system !== undefined && set.system !== system)
      problems.push({
        path: at,
        message: `NodeSet "${set.name}" was given another LvmSystem as its system option than LvmSystem "${facts.name}"`,
      });
    else if (set.namespace !== facts.namespace)
      problems.push({
        path: at,
        message: `NodeSet "${set.name}" is in namespace "${set.namespace}", LvmSystem "${facts.name}" in "${facts.namespace}": its agents never build that node set`,
      });
    return [set];
  });
}
