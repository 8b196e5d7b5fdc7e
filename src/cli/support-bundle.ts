import { writeFile } from "node:fs/promises";
import { createKubeClient } from "../kube/client";
import { requestCredentials } from "../kube/connection";
import type { CliIO } from "../process/subcommand";
import { PACKAGE_VERSION } from "../version";
import { parseCommandLine } from "./args";
import { BundleCollector, type BundleApi } from "./bundle-collector";
import { redactor } from "./bundle-redaction";
import { collectBundle } from "./bundle-sources";
import { CLUSTER_FLAGS, CLUSTER_FLAGS_USAGE, clusterConnection, type ClusterFlags } from "./cluster";
import { EXIT, USAGE_EXIT } from "./exit-codes";
import { gzippedTar } from "./ustar";

export const SUPPORT_BUNDLE_USAGE = `usage: pulumi-lvm support-bundle -o FILE.tgz [--namespace NS] [--tail LINES] [--log-bytes BYTES] [--kubeconfig PATH] [--context NAME]

Collects what a bug report about pulumi-lvm needs into one gzipped tar file, through your
kubeconfig (reads only): the LVMNodeSets and LVMNodes with their status and events, the CRDs'
versions, StorageClasses, VolumeSnapshotClasses, CSINodes, TopoLVM's CSIDriver, pods and
LogicalVolumes, the operator's and the agents' Deployments, DaemonSets, pods and logs, and what
each agent reported through its LVMNode. manifest.json in it says when, from which API server,
what was collected and what could not be, with the reason (e.g. HTTP 403).

Never in it: Secrets (never read), ConfigMaps, env var values, tokens, passwords, private keys,
JWTs, bearer values, last-applied-configuration annotations, your kubeconfig's credentials.
Look through it before you attach it; it names your nodes, disks and namespaces.

  -o, --output FILE   where to write the bundle (a .tgz)
  --namespace NS      only this namespace's objects, pods and events (default: all; cluster-wide
                      objects such as StorageClasses and CSINodes are always read)
  --tail LINES        the last lines of each container's log (default: 1000)
  --log-bytes BYTES   at most this much of each container's log (default: 1048576)
${CLUSTER_FLAGS_USAGE}

exit codes:
  0  the bundle was written (items that could not be read are listed in its manifest.json)
  1  nothing could be read from the cluster, or the file could not be written
  2  usage error (bad arguments)
`;

/** The apiVersion of the bundle's manifest.json. */
export const SUPPORT_BUNDLE_API_VERSION = "pulumi-lvm.dev/support-bundle/v1";

const FLAGS = {
  output: { type: "string", short: "o", value: "file" },
  namespace: { type: "string", value: "namespace" },
  tail: { type: "string", value: "number of lines" },
  "log-bytes": { type: "string", value: "number of bytes" },
  ...CLUSTER_FLAGS,
} as const;

/** The cluster the bundle is read from: the API, its server's URL, the user's credentials (to redact). */
export interface BundleCluster {
  readonly api: BundleApi;
  readonly server: string;
  readonly secrets: readonly string[];
}

/** What `support-bundle` uses of the outside world besides its CliIO; tests substitute them. */
export interface SupportBundleDeps {
  /** @default the user's kubeconfig (--kubeconfig, --context) */
  readonly cluster?: (flags: ClusterFlags) => Promise<BundleCluster>;
  /** @default fs.writeFile, mode 0600 */
  readonly writeFile?: (path: string, data: Buffer) => Promise<void>;
  /** @default the system clock */
  readonly now?: () => Date;
}

/** `pulumi-lvm support-bundle`: reads the cluster, redacts, writes the .tgz. */
export async function run(io: CliIO, deps: SupportBundleDeps = {}): Promise<number> {
  const line = parseCommandLine(io.argv, FLAGS);
  if (line.kind === "help") return (io.stdout(SUPPORT_BUNDLE_USAGE), EXIT.OK);
  const usage = (message: string) => (
    io.stderr(`pulumi-lvm support-bundle: ${message}\n\n${SUPPORT_BUNDLE_USAGE}`),
    USAGE_EXIT
  );
  if (line.kind === "error") return usage(line.message);
  const v = line.values as {
    output?: string;
    namespace?: string;
    tail?: string;
    "log-bytes"?: string;
  } & ClusterFlags;
  if (!v.output) return usage("-o FILE is required (where to write the bundle)");
  const tailLines = positive(v.tail, 1000);
  const limitBytes = positive(v["log-bytes"], 1024 * 1024);
  if (tailLines === undefined) return usage(`--tail needs a positive whole number, not "${v.tail}"`);
  if (limitBytes === undefined)
    return usage(`--log-bytes needs a positive whole number, not "${v["log-bytes"]}"`);
  const fail = (message: string) => (io.stderr(`pulumi-lvm support-bundle: ${message}\n`), EXIT.INVALID);

  let cluster: BundleCluster;
  try {
    cluster = await (deps.cluster ?? userCluster)(v);
  } catch (e) {
    return fail((e as Error).message ?? String(e));
  }
  const now = (deps.now ?? (() => new Date()))();
  const c = new BundleCollector(cluster.api, redactor(cluster.secrets));
  await collectBundle(c, { namespace: v.namespace, tailLines, limitBytes });
  const manifest = {
    apiVersion: SUPPORT_BUNDLE_API_VERSION,
    createdAt: now.toISOString(),
    pulumiLvmVersion: PACKAGE_VERSION,
    cluster: { server: new URL(cluster.server).hostname },
    namespace: v.namespace ?? "(all namespaces)",
    logs: { tailLines, limitBytes },
    redacted:
      "Secrets and ConfigMaps are never read; credential fields, env var values, last-applied-configuration, private keys, JWTs, bearer-token values and the kubeconfig's credentials are replaced by <redacted>",
    collected: c.collected,
    absent: c.absent,
    failed: c.failed,
    notCollected: c.notCollected,
  };
  const files = [
    {
      name: "support-bundle/manifest.json",
      content: c.redact.text(`${JSON.stringify(manifest, null, 2)}\n`),
    },
    ...c.tarFiles(),
  ];
  try {
    await (deps.writeFile ?? ((path, data) => writeFile(path, data, { mode: 0o600 })))(
      v.output,
      gzippedTar(files, now),
    );
  } catch (e) {
    return fail(`cannot write ${v.output}: ${(e as Error).message ?? String(e)}`);
  }
  for (const f of c.failed) io.stderr(`could not collect ${f.what}: ${f.error}\n`);
  io.stdout(
    `wrote ${v.output}: ${c.collected.length} item(s) collected, ${c.absent.length} not in this cluster, ${c.failed.length} failed (manifest.json lists them)\n`,
  );
  return c.collected.length > 0 ? EXIT.OK : fail("nothing could be read from the cluster (see above)");
}

/** The user's cluster from their kubeconfig; the token and client key it sends are searched for and redacted. */
export async function userCluster(flags: ClusterFlags): Promise<BundleCluster> {
  const connection = clusterConnection(flags);
  const credentials = await requestCredentials(connection);
  const token = credentials.headers.authorization?.replace(/^Bearer\s+/i, "");
  return {
    api: createKubeClient({ connection }),
    server: connection.server,
    secrets: [token, credentials.tls?.key].filter((s): s is string => !!s),
  };
}

function positive(value: string | undefined, fallback: number): number | undefined {
  if (value === undefined) return fallback;
  return /^[1-9][0-9]*$/.test(value) ? Number(value) : undefined;
}
