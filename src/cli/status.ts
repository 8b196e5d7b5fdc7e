import { LVM_NODES, LVM_NODE_SETS, resourcePath } from "../kube/resources";
import type { KubeClient, KubePaths } from "../kube/client";
import type { LVMNodeObject, LVMNodeSetObject } from "../operator/types";
import type { CliIO } from "../process/subcommand";
import { parseCommandLine } from "./args";
import { CLUSTER_FLAGS, CLUSTER_FLAGS_USAGE, clusterClient } from "./cluster";
import { EXIT, exitCodeHelp, USAGE_EXIT } from "./exit-codes";
import { columns, OUTPUT_FLAGS, outputFormat, toYaml } from "./output";
import { allWell, statusView, type NodeView, type StatusView } from "./status-view";
import { statusMap } from "./html/status-map";
import { writePage } from "./html/write-page";

export const STATUS_USAGE = `usage: pulumi-lvm status [--namespace NS] [--nodeset NAME] [--node NAME]... [-o text|wide|json|yaml] [--html FILE] [--kubeconfig PATH] [--context NAME]

What each LVMNodeSet and each node's storage is now, as the operator and the agents report it in
the cluster (the LVMNodeSets' and LVMNodes' status; nothing is written): sets with their ready and
rolled-out nodes, each node's volume groups (size, free, physical volumes) and thin pools (size,
data and metadata use), plans waiting for an approval, and every condition that needs a look.

  --namespace NS      only this namespace (default: all)
  --nodeset NAME      only this LVMNodeSet
  --node NAME         only these nodes (repeatable)
  -o, --output FMT    text (default), wide (every condition's message), json or yaml
  --html FILE         also write it as one self-contained HTML page (it loads nothing): nodes ×
                      devices coloured by state and why, the groups' and pools' use as bars
${CLUSTER_FLAGS_USAGE}

${exitCodeHelp(["OK", "INVALID", "USAGE", "BLOCKED"], {
  OK: "every set and node is Ready, nothing waits",
  INVALID: "the cluster could not be read (the message says why)",
  BLOCKED: "something needs a look: a node or set not Ready, a plan waiting, a paused rollout",
})}
`;

/** The apiVersion of status's JSON/YAML document (docs/cli.md, Stable shapes). */
export const STATUS_API_VERSION = "pulumi-lvm.dev/status/v1";

const FLAGS = {
  namespace: { type: "string", value: "namespace" },
  nodeset: { type: "string", value: "name" },
  node: { type: "string", value: "node", multiple: true },
  html: { type: "string", value: "file" },
  ...CLUSTER_FLAGS,
  ...OUTPUT_FLAGS,
} as const;

/** `pulumi-lvm status`: reads the sets and nodes through the user's kubeconfig. */
export async function run(io: CliIO, client?: KubeClient & KubePaths): Promise<number> {
  const line = parseCommandLine(io.argv, FLAGS);
  if (line.kind === "help") return (io.stdout(STATUS_USAGE), EXIT.OK);
  const usage = (message: string) => (
    io.stderr(`pulumi-lvm status: ${message}\n\n${STATUS_USAGE}`),
    USAGE_EXIT
  );
  if (line.kind === "error") return usage(line.message);
  const format = outputFormat(line.values, "text");
  if ("error" in format) return usage(format.error);
  const v = line.values as {
    namespace?: string;
    nodeset?: string;
    node?: string[];
    html?: string;
    kubeconfig?: string;
    context?: string;
  };
  try {
    const kube = client ?? clusterClient({ kubeconfig: v.kubeconfig, context: v.context });
    const list = async <T>(path: string) => ((await kube.getPath(path)) as { items?: T[] }).items ?? [];
    const sets = (await list<LVMNodeSetObject>(resourcePath(LVM_NODE_SETS, v.namespace))).filter(
      (s) => !v.nodeset || s.metadata.name === v.nodeset,
    );
    if (v.nodeset && sets.length === 0)
      throw new Error(
        `no LVMNodeSet named ${v.nodeset}${v.namespace ? ` in ${v.namespace}` : " in any namespace"}`,
      );
    const nodes = await list<LVMNodeObject>(resourcePath(LVM_NODES, v.namespace));
    const view = statusView(sets, nodes, v.node?.length ? new Set(v.node) : undefined);
    const shown = v.nodeset ? { ...view, unowned: [] } : view;
    const doc = { apiVersion: STATUS_API_VERSION, ...shown };
    if (v.html !== undefined && !(await writePage(io, "status", v.html, statusMap(shown, nodes))))
      return EXIT.INVALID;
    if (format.format === "json") io.stdout(`${JSON.stringify(doc, null, 2)}\n`);
    else if (format.format === "yaml") io.stdout(toYaml(doc));
    else io.stdout(renderText(shown, format.format === "wide"));
    return allWell(shown) ? EXIT.OK : EXIT.BLOCKED;
  } catch (e) {
    io.stderr(`pulumi-lvm status: ${(e as Error).message ?? String(e)}\n`);
    return EXIT.INVALID;
  }
}

/** The text (and wide) output: a table of sets, a table of nodes, then what needs a look. */
export function renderText(view: StatusView, wide: boolean): string {
  const sets = columns(
    ["NODESET", "STATE", "READY", "ROLLOUT"],
    view.nodeSets.map((s) => [
      `${s.namespace}/${s.name}`,
      s.state ?? "-",
      `${s.readyNodes}/${s.desiredNodes}`,
      s.rollout
        ? `${s.rollout.updatedNodes}/${s.rollout.totalNodes}${s.rollout.templateGeneration !== undefined ? ` (generation ${s.rollout.templateGeneration})` : ""}`
        : "-",
    ]),
  );
  const owned = view.nodeSets.flatMap((s) => s.nodes.map((n) => [s.name, n] as const));
  const all: Array<readonly [string, NodeView]> = [...owned, ...view.unowned.map((n) => ["-", n] as const)];
  const nodes = columns(
    ["NODE", "NODESET", "STATE", "VOLUME GROUPS", "THIN POOLS", "PENDING"],
    all.map(([set, n]) => [
      n.node,
      set,
      n.state ?? "-",
      n.volumeGroups
        .map((g) => `${g.name} ${g.state} ${g.size ?? "?"} (free ${g.free ?? "?"}, ${g.physicalVolumes} PV)`)
        .join("; ") || "-",
      n.volumeGroups
        .flatMap((g) =>
          g.thinPools.map(
            (p) =>
              `${g.name}/${p.name} ${p.size ?? "?"} data ${p.dataPercent ?? "?"}% meta ${p.metadataPercent ?? "?"}%`,
          ),
        )
        .join("; ") || "-",
      n.pendingApproval ? n.pendingApproval.slice(0, wide ? undefined : 12) : "-",
    ]),
  );
  const clip = (m: string | undefined) =>
    !m ? "" : wide || m.length <= 160 ? `: ${m}` : `: ${m.slice(0, 157)}...`;
  const notes = [
    ...view.nodeSets.flatMap((s) =>
      s.attention.map(
        (c) =>
          `LVMNodeSet ${s.namespace}/${s.name}: ${c.type} ${c.status} (${c.reason ?? "-"})${clip(c.message)}`,
      ),
    ),
    ...all.flatMap(([, n]) =>
      n.attention.map((c) => `node ${n.node}: ${c.type} ${c.status} (${c.reason ?? "-"})${clip(c.message)}`),
    ),
  ];
  return [
    sets,
    nodes,
    ...(notes.length ? [`needs a look:\n${notes.map((l) => `  ${l}\n`).join("")}`] : []),
  ].join("\n");
}
