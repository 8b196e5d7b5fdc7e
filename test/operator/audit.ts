/**
 * kube-apiserver's audit log, for tests that must know who wrote what when: every request at
 * Metadata level (user, User-Agent, verb, object, code, times), Lease writes at Request level (the
 * holder they name). The operator's User-Agent names its replica (src/operator/leader/replica.ts).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export interface AuditEvent {
  readonly verb: string;
  readonly user: { readonly username: string };
  readonly userAgent?: string;
  readonly objectRef?: {
    readonly resource?: string;
    readonly namespace?: string;
    readonly name?: string;
    readonly subresource?: string;
    readonly apiGroup?: string;
  };
  readonly responseStatus?: { readonly code?: number };
  readonly requestObject?: { readonly spec?: { readonly holderIdentity?: string } };
  readonly requestReceivedTimestamp: string;
  readonly stageTimestamp: string;
}

export const WRITE_VERBS = new Set(["create", "update", "patch", "delete", "deletecollection"]);

export class AuditLog {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), "audit-"));
  readonly file = path.join(this.dir, "audit.log");

  /** The kube-apiserver flags that write it. */
  flags(): string[] {
    const policy = path.join(this.dir, "policy.yaml");
    fs.writeFileSync(
      policy,
      [
        "apiVersion: audit.k8s.io/v1",
        "kind: Policy",
        "omitStages: [RequestReceived]",
        "rules:",
        "  - level: Request",
        "    verbs: [create, update, patch]",
        "    resources: [{ group: coordination.k8s.io, resources: [leases] }]",
        "  - level: Metadata",
        "",
      ].join("\n"),
    );
    return [`--audit-policy-file=${policy}`, `--audit-log-path=${this.file}`, "--audit-log-mode=blocking"];
  }

  events(): AuditEvent[] {
    if (!fs.existsSync(this.file)) return [];
    return fs
      .readFileSync(this.file, "utf8")
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as AuditEvent);
  }

  cleanup(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The replica a request came from: "(identity)" at the end of the operator's User-Agent. */
export function replicaOf(e: AuditEvent): string | undefined {
  return /^pulumi-lvm-operator\/\S+ \((.+)\)$/.exec(e.userAgent ?? "")?.[1];
}

export const isLeaseWrite = (e: AuditEvent) => e.objectRef?.resource === "leases" && WRITE_VERBS.has(e.verb);

/**
 * Each write of an operator replica other than to the Lease, checked against the Lease's holder
 * at the time the API server received it: the holder named by the last successful Lease write
 * that completed before (a release names ""). Returns the writes whose replica did not hold it.
 */
export function writesWithoutLease(
  events: readonly AuditEvent[],
  leaseName: string,
): Array<{ replica: string; holder: string; event: AuditEvent }> {
  const micros = (t: string) => Date.parse(t) * 1000 + Number(/\.\d{3}(\d{3})/.exec(t)?.[1] ?? 0);
  const leaseChanges = events
    .filter((e) => isLeaseWrite(e) && e.objectRef?.name === leaseName && (e.responseStatus?.code ?? 0) < 300)
    // From when the Lease write was received (it commits after): the strict reading for the old holder.
    .map((e) => ({
      at: micros(e.requestReceivedTimestamp),
      holder: e.requestObject?.spec?.holderIdentity ?? "",
    }))
    .sort((a, b) => a.at - b.at);
  const out: Array<{ replica: string; holder: string; event: AuditEvent }> = [];
  for (const e of events) {
    const replica = replicaOf(e);
    if (!replica || !WRITE_VERBS.has(e.verb) || isLeaseWrite(e)) continue;
    const at = micros(e.requestReceivedTimestamp);
    const holder = [...leaseChanges].reverse().find((c) => c.at <= at)?.holder ?? "";
    if (holder !== replica) out.push({ replica, holder, event: e });
  }
  return out;
}
