import * as fs from "node:fs";
import * as path from "node:path";
import type { WipeSignature } from "../planner/types";
import { FileWriteError, fsyncDir, writeAllSync, writeFileAtomic } from "./atomic-file";

/**
 * The operation journal: one JSON object per line in `<stateDir>/journal.jsonl`, each line written
 * with a single write() and fdatasync'd before the step it announces runs. It is how the agent knows,
 * after a crash, what it was doing, which devices the caller approved, and which devices it already
 * wiped. A torn last line (a crash mid-write) is cut off when the journal is opened.
 */
export type JournalRecord = OperationStart | ActionStart | ActionFinish | ActionError | OperationFinish;

export type OperationKind = "apply" | "teardown";

export interface ApprovedDevice {
  readonly kname: string;
  /** The identity the approved plan gave the device (PlanAction.deviceId / DeviceClaim.id). */
  readonly id?: string;
}

/** A destructive step the approved plan contains (wipefs, vgremove --force), with what it destroys. */
export interface ApprovedDestruction {
  readonly op: string;
  readonly argv: readonly string[];
  readonly device?: string;
  /** wipefs: the signatures the reviewer saw (type, UUID, label, offset). */
  readonly signatures?: readonly WipeSignature[];
}

export interface OperationStart {
  readonly type: "operation-start";
  readonly op: string;
  readonly kind: OperationKind;
  readonly at: string;
  /** The plan hash the caller approved. */
  readonly approvedHash: string;
  /** The hash of the plan being executed (differs from approvedHash only when resuming). */
  readonly planHash: string;
  /** sha256 of the canonical JSON of the spec and the teardown target. */
  readonly specDigest: string;
  /** The LVMNode spec the caller sent. */
  readonly spec: unknown;
  /** Teardown only: what to tear down ({volumeGroup?, deviceClass?, force?}). */
  readonly target?: unknown;
  /** Every device the approved plan claims or writes to: the only devices this operation may write. */
  readonly devices: readonly ApprovedDevice[];
  /**
   * Every destructive step of the approved plan. A resume may only run destructive steps listed here
   * (absent in journals written before it existed: then none).
   */
  readonly destructive?: readonly ApprovedDestruction[];
  /** The devices the approved plan claimed for its volume groups: a resume that would leave one out is refused. */
  readonly claimed?: readonly string[];
  /**
   * The same per volume group: name → the devices the approved plan put in it. Status reports a group
   * with fewer physical volumes than this as Degraded (absent in journals written before it existed).
   */
  readonly claimedByVolumeGroup?: Readonly<Record<string, readonly string[]>>;
  readonly actionCount: number;
  /** The interrupted operation this one resumes. */
  readonly resumes?: string;
}

export interface ActionStart {
  readonly type: "action-start";
  readonly op: string;
  readonly index: number;
  readonly at: string;
  readonly action: string;
  readonly argv: readonly string[];
  readonly device?: string;
  readonly deviceId?: string;
}

export interface ActionFinish {
  readonly type: "action-finish";
  readonly op: string;
  readonly index: number;
  readonly at: string;
  readonly action: string;
  readonly device?: string;
  readonly deviceId?: string;
  /** Set when the step was not run because its postcondition already held. */
  readonly skipped?: string;
  /** pvcreate: the UUID of the physical volume it created. */
  readonly pvUuid?: string;
  readonly durationMs: number;
}

export interface JournalError {
  readonly message: string;
  readonly argv?: readonly string[];
  readonly exitCode?: number | null;
  readonly stderr?: string;
}

export interface ActionError {
  readonly type: "action-error";
  readonly op: string;
  readonly index: number;
  readonly at: string;
  readonly action: string;
  readonly device?: string;
  readonly error: JournalError;
}

export interface OperationFinish {
  readonly type: "operation-finish";
  readonly op: string;
  readonly at: string;
  readonly result: "succeeded" | "failed" | "superseded";
  readonly error?: JournalError;
}

/** What the journal says about one operation, for status and for resuming. */
export interface OperationSummary {
  readonly start: OperationStart;
  readonly finish?: OperationFinish;
  readonly actions: readonly (ActionStart | ActionFinish | ActionError)[];
}

export interface JournalOptions {
  /** Directory of journal.jsonl; created (mode 0700) when missing. */
  readonly stateDir: string;
  /** Rewrite the journal, keeping the last operation and every wipe, when it grows past this. @default 4 MiB */
  readonly compactAtBytes?: number;
  /**
   * Only read it (`pulumi-lvm inventory` beside a running agent): nothing is created or cut back, and
   * append throws. A torn last line is ignored, as the agent ignores it.
   * @default false
   */
  readonly readOnly?: boolean;
}

export const JOURNAL_FILE = "journal.jsonl";

export class Journal {
  private readonly file: string;
  private readonly compactAtBytes: number;
  private records: JournalRecord[];
  private size: number;
  private closed = false;

  constructor(options: JournalOptions) {
    if (!options.readOnly) fs.mkdirSync(options.stateDir, { recursive: true, mode: 0o700 });
    this.file = path.join(options.stateDir, JOURNAL_FILE);
    this.compactAtBytes = options.compactAtBytes ?? 4 * 1024 * 1024;
    this.closed = options.readOnly === true;
    const { records, validBytes, totalBytes } = readJournal(this.file);
    if (validBytes < totalBytes && !options.readOnly) fs.truncateSync(this.file, validBytes);
    this.records = records;
    this.size = validBytes;
  }

  /**
   * Appends one record durably: the call returns after the bytes are on disk. When the line cannot be
   * written whole (a full filesystem, an I/O error), the file is cut back to the records before it
   * (so no torn line stays in the middle of the journal) and a FileWriteError naming the file is thrown.
   */
  append(record: JournalRecord): void {
    if (this.closed)
      throw new FileWriteError(
        this.file,
        new Error("the journal is closed (the agent is stopping, or it was opened read-only)"),
      );
    const line = Buffer.from(`${JSON.stringify(record)}\n`, "utf8");
    const created = !fs.existsSync(this.file);
    let fd: number;
    try {
      fd = fs.openSync(this.file, "a", 0o600);
    } catch (e) {
      throw new FileWriteError(this.file, e);
    }
    try {
      writeAllSync(fd, line, this.file);
      fs.fdatasyncSync(fd);
    } catch (e) {
      try {
        fs.ftruncateSync(fd, this.size);
        fs.fdatasyncSync(fd);
      } catch {
        /* cut off when the journal is next opened: a torn last line */
      }
      throw e instanceof FileWriteError ? e : new FileWriteError(this.file, e);
    } finally {
      fs.closeSync(fd);
    }
    if (created) fsyncDir(path.dirname(this.file));
    this.records.push(record);
    this.size += line.length;
    if (record.type === "operation-finish" && this.size > this.compactAtBytes) {
      try {
        this.compact();
      } catch {
        /* compaction is an optimization; the journal as it is stays valid */
      }
    }
  }

  /**
   * Appends a record that reports an outcome (a failure, the end of an operation); when it cannot be
   * written, it is kept in memory so this process's status still tells what happened, and the error
   * is returned. After a restart the operation shows as interrupted, which is then the truth on disk.
   */
  record(record: JournalRecord): Error | undefined {
    try {
      this.append(record);
      return undefined;
    } catch (e) {
      this.records.push(record);
      return e instanceof Error ? e : new Error(String(e));
    }
  }

  /** No record is written after this (the agent released, or is about to release, its state-dir lock). */
  close(): void {
    this.closed = true;
  }

  /** Every operation, oldest first. */
  operations(): OperationSummary[] {
    const byId = new Map<
      string,
      {
        start: OperationStart;
        finish?: OperationFinish;
        actions: (ActionStart | ActionFinish | ActionError)[];
      }
    >();
    for (const r of this.records) {
      if (r.type === "operation-start") byId.set(r.op, { start: r, actions: [] });
      const entry = byId.get(r.op);
      if (!entry) continue;
      if (r.type === "operation-finish") entry.finish = r;
      else if (r.type !== "operation-start") entry.actions.push(r);
    }
    return [...byId.values()];
  }

  /** The last operation, if any. */
  last(): OperationSummary | undefined {
    return this.operations().at(-1);
  }

  /** The last operation when it started and never finished: the agent died during it. */
  interrupted(): OperationSummary | undefined {
    const last = this.last();
    return last && !last.finish ? last : undefined;
  }

  /**
   * Identities (deviceId, else "kname:<path>") of devices whose wipe finished in one of `ops`, with the
   * operation that wiped them. Scoped to an operation and the interrupted ones it resumes: a disk torn
   * down, re-formatted and approved for a wipe again later is wiped again.
   */
  wiped(ops: ReadonlySet<string>): Map<string, string> {
    const out = new Map<string, string>();
    for (const r of this.records)
      if (r.type === "action-finish" && r.action === "wipefs" && !r.skipped && r.device && ops.has(r.op))
        out.set(wipeKey(r.device, r.deviceId), r.op);
    return out;
  }

  /** `op` and every interrupted operation it resumes, directly or through a chain of resumes. */
  resumeChain(op: string): Set<string> {
    const starts = new Map<string, OperationStart>();
    for (const r of this.records) if (r.type === "operation-start") starts.set(r.op, r);
    const chain = new Set<string>();
    for (let cur: string | undefined = op; cur && !chain.has(cur); cur = starts.get(cur)?.resumes)
      chain.add(cur);
    return chain;
  }

  /**
   * pvcreate steps that started and have no record of finishing, in the interrupted operation and the
   * operations it resumes: the agent died while (or right after) the PV was created, before its UUID
   * was journaled.
   */
  unfinishedPvcreates(): ActionStart[] {
    const interrupted = this.interrupted();
    if (!interrupted) return [];
    const chain = this.resumeChain(interrupted.start.op);
    const out: ActionStart[] = [];
    for (const o of this.operations()) {
      if (!chain.has(o.start.op)) continue;
      const ended = new Set(o.actions.filter((a) => a.type !== "action-start").map((a) => a.index));
      for (const a of o.actions)
        if (a.type === "action-start" && a.action === "pvcreate" && !ended.has(a.index)) out.push(a);
    }
    return out;
  }

  /** The pvcreate steps this agent finished, with the UUID of the PV each created. */
  createdPvs(): ActionFinish[] {
    return this.records.filter(
      (r): r is ActionFinish => r.type === "action-finish" && r.pvUuid !== undefined,
    );
  }

  /** Keeps the last operation, every finished wipe and every PV created; atomically replaces the file. */
  private compact(): void {
    const last = this.last();
    const keep = this.records.filter(
      (r) =>
        (r.type === "action-finish" && ((r.action === "wipefs" && !r.skipped) || r.pvUuid !== undefined)) ||
        (last && r.op === last.start.op),
    );
    const text = keep.map((r) => `${JSON.stringify(r)}\n`).join("");
    writeFileAtomic(this.file, text, 0o600);
    this.records = keep;
    this.size = Buffer.byteLength(text);
  }
}

/** The key the journal tracks wiped devices by. */
export function wipeKey(device: string, deviceId: string | undefined): string {
  return deviceId ?? `kname:${device}`;
}

/* ------------------------------------------------------------------------------ helpers ---- */

/**
 * Parses the journal. A last line without its newline is a torn write (the agent died in write()):
 * it is not a record, and validBytes ends before it. Any other line that is not a record means the
 * file was damaged; that throws rather than guess which devices were approved or wiped.
 */
export function readJournal(file: string): {
  records: JournalRecord[];
  validBytes: number;
  totalBytes: number;
} {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { records: [], validBytes: 0, totalBytes: 0 };
    throw e;
  }
  const records: JournalRecord[] = [];
  let offset = 0;
  let line = 1;
  for (let nl = buf.indexOf(0x0a); nl >= 0; nl = buf.indexOf(0x0a, offset), line++) {
    let record: unknown;
    try {
      record = JSON.parse(buf.subarray(offset, nl).toString("utf8"));
    } catch {
      record = undefined;
    }
    if (!isRecord(record))
      throw new Error(
        `${file}: line ${line} is not a journal record; the journal is damaged (move it aside to start over)`,
      );
    records.push(record);
    offset = nl + 1;
  }
  return { records, validBytes: offset, totalBytes: buf.length };
}

function isRecord(value: unknown): value is JournalRecord {
  if (typeof value !== "object" || value === null) return false;
  const r = value as { type?: unknown; op?: unknown };
  return (
    typeof r.op === "string" &&
    ["operation-start", "action-start", "action-finish", "action-error", "operation-finish"].includes(
      r.type as string,
    )
  );
}
