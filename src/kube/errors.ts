/** What the API server says in a failed response (a metav1.Status). */
interface StatusBody {
  message?: string;
  reason?: string;
  details?: { causes?: Array<{ field?: string; message?: string; reason?: string }> };
}

/**
 * A request the API server refused, or could not be reached for. The message names the verb, the
 * object, the HTTP status, the API's reason and message, and the field path of every cause.
 *
 * @example "PATCH LVMNode storage/node-a: HTTP 422 Invalid: spec.volumeGroups[0].name: Invalid value ..."
 */
export class KubeApiError extends Error {
  constructor(
    readonly verb: string,
    /** "LVMNode storage/node-a" */
    readonly object: string,
    /** HTTP status; 0 when no answer arrived, or one that is not JSON. */
    readonly status: number,
    /** The API's reason (NotFound, Conflict, AlreadyExists, Invalid, Forbidden, Expired, ...), or "". */
    readonly reason: string,
    readonly apiMessage: string,
    readonly causes: ReadonlyArray<{ readonly field?: string; readonly message?: string }> = [],
    options?: ErrorOptions & {
      /** Leave the reason out of the message (requests by path name the call, not an object). @default true */
      readonly reasonInMessage?: boolean;
    },
  ) {
    const fields = causes
      .filter((c) => c.field || c.message)
      .map((c) => (c.field ? `${c.field}: ${c.message ?? ""}` : (c.message ?? "")));
    const detail =
      fields.length && !fields.every((f) => apiMessage.includes(f)) ? ` (${fields.join("; ")})` : "";
    super(
      `${verb} ${object}: ${status ? `HTTP ${status}${reason && options?.reasonInMessage !== false ? ` ${reason}` : ""}: ` : ""}${apiMessage}${detail}`,
      options,
    );
    this.name = "KubeApiError";
  }

  /** From a response: the Status body when there is one, else the start of the text. */
  static fromResponse(
    verb: string,
    object: string,
    status: number,
    text: string,
    options?: { readonly reasonInMessage?: boolean },
  ): KubeApiError {
    let body: StatusBody = {};
    try {
      body = JSON.parse(text) as StatusBody;
    } catch {
      body = { message: text.slice(0, 500) || "(empty response)" };
    }
    return new KubeApiError(
      verb,
      object,
      status,
      body.reason ?? "",
      body.message ?? text.slice(0, 500),
      body.details?.causes ?? [],
      options,
    );
  }
}

/** True for a 404. */
export const isNotFound = (e: unknown): boolean => e instanceof KubeApiError && e.status === 404;
/** True for a 409 (AlreadyExists or a resourceVersion/precondition Conflict). */
export const isConflict = (e: unknown): boolean => e instanceof KubeApiError && e.status === 409;

/** The message of a Kubernetes Status body (`{kind: "Status", message}`), if it is one. */
export function kubeStatusMessage(json: unknown): string | undefined {
  if (typeof json !== "object" || json === null) return undefined;
  const status = json as { kind?: unknown; message?: unknown };
  return status.kind === "Status" && typeof status.message === "string" ? status.message : undefined;
}
