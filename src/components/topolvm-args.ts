import { z } from "zod";
import {
  checkLVMNodeSetSpec,
  formatPath,
  type NodeSelector,
  type Template,
  type ValidationProblem,
} from "../api";
import type { NodeSelectorSpec, NodeSetTemplate } from "./spec-args";
import { chartSourceProblems } from "./topolvm-chart";
import { planTopolvm, type TopolvmPlan } from "./topolvm-values";
import { namespaceName, objectName } from "./validate-args";

/** A node set whose device classes TopoLVM's lvmd serves: what its NodeSet gets, minus the rest. */
export interface TopolvmNodeSet {
  /** metadata.name of the LVMNodeSet: the NodeSet's nodeSetName (by default its component name). @example "edge-north" */
  readonly name: string;
  /**
   * The NodeSet's nodeSelector, as given to it (core/v1 NodeSelector).
   * @default every node
   * @example { nodeSelectorTerms: [{ matchExpressions: [{ key: "topology.kubernetes.io/zone", operator: "In", values: ["edge-north"] }] }] }
   */
  readonly nodeSelector?: NodeSelectorSpec;
  /** The NodeSet's template, as given to it; lvmd gets its device classes. */
  readonly template: NodeSetTemplate;
}

/** TopoLVM, installed from its official Helm chart. */
export interface TopolvmSettings {
  /** The chart version, pinned (upgrades are deliberate); 11.5.0 or later. @example "15.7.1" */
  readonly chartVersion: string;
  /**
   * Every node set of the cluster, as given to its NodeSet. Each gets its own lvmd (a DaemonSet of the
   * chart) with exactly its device classes, on exactly the nodes it selects and no other node set
   * selects; a node that several select gets none, as the agents leave such a node alone.
   */
  readonly nodeSets: TopolvmNodeSet[];
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
   * TopoLVM's chart on local disk instead of a repository (air-gapped sites, tests): a chart
   * directory, whose Chart.yaml must be TopoLVM's chart at exactly chartVersion, or a packaged
   * chart (.tgz). Relative paths are relative to the Pulumi program's directory. Not with repository.
   * @default none (the chart comes from `repository`)
   * @example "./charts/topolvm"
   */
  readonly chartPath?: string;
  /**
   * Extra chart values, e.g. for cert-manager or the scheduler. Where lvmd and topolvm-node run, lvmd's
   * classes and socket, and the chart's StorageClasses are LvmSystem's (a value for one of them is an
   * error); lvmd.lvcreateOptionClasses and lvmd.additionalLVMDYamlContent go to every node set's lvmd.
   * @default {}
   * @example { "cert-manager": { enabled: true } }
   */
  // Free-form Helm values: Pulumi's schema inference maps `any` (not `unknown`) to its Any type.
  readonly values?: { [key: string]: any }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * The oldest chart whose lvmd.additionalConfigs entries take their own `affinity` (topolvm PR #720,
 * July 2023; chart 11.5.0 was released from main that September). An older chart ignores it and runs
 * every node set's lvmd on every node.
 */
export const MIN_CHART_VERSION = "11.5.0";

const CHART_VERSION = /^v?(\d+)\.(\d+)\.(\d+)([-+][0-9A-Za-z.-]+)?$/;

export const topolvmArgsSchema = z.strictObject({
  chartVersion: z.string().superRefine((version, ctx) => {
    const parts = CHART_VERSION.exec(version);
    if (!parts)
      ctx.addIssue({
        code: "custom",
        message: `must be an exact chart version such as "15.7.1" (got ${JSON.stringify(version)})`,
      });
    else if (compareVersions(parts.slice(1, 4).map(Number), MIN_CHART_VERSION.split(".").map(Number)) < 0)
      ctx.addIssue({
        code: "custom",
        message: `must be ${MIN_CHART_VERSION} or later: older charts ignore the affinity of each node set's lvmd (lvmd.additionalConfigs[].affinity) and would run every node set's lvmd on every node (got ${JSON.stringify(version)})`,
      });
  }),
  nodeSets: z
    .array(
      z.strictObject({
        name: objectName,
        // Checked by checkTopolvmArgs, as far as lvmd depends on them.
        nodeSelector: z.unknown().optional(),
        template: z.unknown(),
      }),
    )
    .min(1),
  deviceClasses: z
    .undefined({
      error:
        "replaced by nodeSets: each node set's lvmd serves that node set's device classes on its nodes only (pass every NodeSet's name, nodeSelector and template)",
    })
    .optional(),
  releaseName: namespaceName.optional(),
  repository: z.url({ protocol: /^(https?|oci)$/ }).optional(),
  chartPath: z.string().min(1).optional(),
  values: z.record(z.string(), z.unknown()).optional(),
});

/** The Topolvm component's args: the same chart settings, without node sets (it is given the NodeSets). */
export const topolvmReleaseArgsSchema = topolvmArgsSchema.omit({ nodeSets: true, deviceClasses: true });

const plannedArgs = topolvmArgsSchema.pick({ nodeSets: true, values: true });
const chartSourceArgs = topolvmArgsSchema.pick({ chartVersion: true, repository: true, chartPath: true });

/** Where LvmSystem's agents run: lvmd and topolvm-node follow them. */
export interface AgentPlacement {
  readonly nodeSelector?: Readonly<Record<string, string>>;
  readonly tolerations?: ReadonlyArray<object>;
}

export interface TopolvmCheck {
  /** Paths under `args.topolvm`. */
  readonly problems: readonly ValidationProblem[];
  /** The chart plan, when there are no problems. */
  readonly plan?: TopolvmPlan;
}

/**
 * LvmSystem's `topolvm` arg beyond its schema: each node set's node selector and device classes (what
 * lvmd depends on), then the chart plan (values, the lvmd per node set, the node sets that may share
 * nodes) and its problems. The rest of a template (device selectors, sizes) is its NodeSet's to
 * report, so a program with a bad device selector hears about it once, from the NodeSet, with its
 * other problems. Nothing when nodeSets or values do not pass topolvmArgsSchema (LvmSystem reports
 * those from its own schema).
 */
export function checkTopolvmArgs(topolvm: TopolvmSettings, agents: AgentPlacement): TopolvmCheck {
  const { chartVersion, repository, chartPath } = topolvm;
  const source = chartSourceArgs.safeParse({ chartVersion, repository, chartPath });
  const chartProblems = source.success ? chartSourceProblems(source.data, "args.topolvm") : [];
  const shape = plannedArgs.safeParse({ nodeSets: topolvm.nodeSets, values: topolvm.values });
  if (!shape.success) return { problems: chartProblems };
  const nodeSets = shape.data.nodeSets;
  const problems = [
    ...chartProblems,
    ...nodeSets.flatMap((set, i) => lvmdProblems(set, ["args", "topolvm", "nodeSets", i])),
  ];
  if (problems.length) return { problems };
  const plan = planTopolvm(
    {
      nodeSets: nodeSets.map((set) => ({
        name: set.name,
        ...(set.nodeSelector ? { nodeSelector: set.nodeSelector as NodeSelector } : {}),
        deviceClasses: (set.template as Template).deviceClasses ?? [],
      })),
      ...(agents.nodeSelector ? { agentNodeSelector: agents.nodeSelector } : {}),
      tolerations: (agents.tolerations ?? []) as ReadonlyArray<Readonly<Record<string, unknown>>>,
      values: shape.data.values ?? {},
    },
    "args.topolvm",
  );
  return { problems: plan.problems, ...(plan.problems.length ? {} : { plan }) };
}

/** The API's problems of a node set's node selector and device classes, and of a missing template. */
function lvmdProblems(
  set: { nodeSelector?: unknown; template: unknown },
  at: PropertyKey[],
): ValidationProblem[] {
  const checked = checkLVMNodeSetSpec(
    { ...(set.nodeSelector !== undefined ? { nodeSelector: set.nodeSelector } : {}), template: set.template },
    at,
  );
  if (checked.ok) return [];
  const base = formatPath(at);
  return checked.problems.filter(
    ({ path }) =>
      path === `${base}.template` ||
      path.startsWith(`${base}.nodeSelector`) ||
      path.startsWith(`${base}.template.deviceClasses`),
  );
}

function compareVersions(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
