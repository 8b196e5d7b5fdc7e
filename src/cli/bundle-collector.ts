import { KubeApiError } from "../kube/errors";
import type { Redactor } from "./bundle-redaction";
import type { TarFile } from "./ustar";

/** What the support bundle reads the cluster through: the user's client (src/kube), by path. */
export interface BundleApi {
  /** A JSON answer. */
  getPath(path: string): Promise<unknown>;
  /** A text answer (a pod's log). */
  getText(path: string): Promise<string>;
}

/** One thing the bundle holds, or tried to: its manifest entry. */
export interface BundleItem {
  /** e.g. "LVMNodes", "log of lvm-system/agent-x (agent)" */
  readonly what: string;
  /** The API path it was read from. */
  readonly path: string;
  /** The file in the bundle (collected items only). */
  readonly file?: string;
  /** How many objects (lists only). */
  readonly count?: number;
  /** HTTP status of a failed or absent item; 0 when no answer arrived. */
  readonly status?: number;
  /** Why it is not in the bundle (the API server's message, redacted). */
  readonly error?: string;
}

/** Something the bundle never tries to collect, and why. */
export interface NotCollected {
  readonly what: string;
  readonly why: string;
}

/** Tries of a read the API server answers 429 or 503. */
const TRANSIENT_ATTEMPTS = 5;

/** The folder every file of the bundle is in. */
export const BUNDLE_DIR = "support-bundle";

/**
 * Reads for the bundle and keeps what it read, redacted: files, and for the manifest what was
 * collected, what the cluster does not have (a 404 where that is normal: an API not served, an
 * object not there), and what failed with its HTTP status. A failure is recorded, never thrown.
 */
export class BundleCollector {
  readonly collected: BundleItem[] = [];
  readonly absent: BundleItem[] = [];
  readonly failed: BundleItem[] = [];
  readonly notCollected: NotCollected[] = [];
  private readonly files = new Map<string, string>();

  constructor(
    private readonly api: BundleApi,
    readonly redact: Redactor,
    /** Waits between retries of a transient answer. @default setTimeout */
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {}

  /**
   * `get`, again after 0.5, 1, 1.5 and 2 s while the API server answers 429 or 503: it asks to be
   * asked again (priority and fairness; a custom resource's storage re-initializing right after its
   * CRD changed, which a bundle taken just after an install meets).
   */
  private async retrying<T>(get: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await get();
      } catch (e) {
        const transient = e instanceof KubeApiError && (e.status === 429 || e.status === 503);
        if (!transient || attempt >= TRANSIENT_ATTEMPTS) throw e;
        await this.sleep(attempt * 500);
      }
    }
  }

  /**
   * The JSON at `path`, or undefined when it could not be read (recorded: in `absent` for a 404
   * when `absentIsNormal`, else in `failed`).
   */
  async read<T>(
    what: string,
    path: string,
    options: { absentIsNormal?: boolean } = {},
  ): Promise<T | undefined> {
    try {
      return (await this.retrying(() => this.api.getPath(path))) as T;
    } catch (e) {
      this.fail(what, path, e, options.absentIsNormal ?? false);
      return undefined;
    }
  }

  /** Adds `value` (redacted) as the JSON file `file`. */
  addJson(file: string, value: unknown, item: { what: string; path: string; count?: number }): void {
    this.put(file, `${JSON.stringify(this.redact.object(value), null, 2)}\n`, item);
  }

  /** Reads the text at `path` into the file `file` (redacted); a failure is recorded. */
  async addText(file: string, what: string, path: string): Promise<void> {
    try {
      this.put(file, this.redact.text(await this.retrying(() => this.api.getText(path))), { what, path });
    } catch (e) {
      this.fail(what, path, e, false);
    }
  }

  /** The files, each under BUNDLE_DIR, in the order they were added. */
  tarFiles(): TarFile[] {
    return [...this.files].map(([name, content]) => ({ name: `${BUNDLE_DIR}/${name}`, content }));
  }

  private put(file: string, content: string, item: { what: string; path: string; count?: number }): void {
    this.files.set(file, content);
    this.collected.push({ ...item, file });
  }

  private fail(what: string, path: string, e: unknown, absentIsNormal: boolean): void {
    const status = e instanceof KubeApiError ? e.status : 0;
    const error = this.redact.text(e instanceof Error ? e.message : String(e));
    (absentIsNormal && status === 404 ? this.absent : this.failed).push({ what, path, status, error });
  }
}

/** A file name's segment from an object's name: safe characters only, at most 63 of them. */
export function fileSegment(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 63);
  return safe === "" || safe === "." || safe === ".." ? "_" : safe;
}
