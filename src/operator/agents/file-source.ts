import { readFile } from "node:fs/promises";

/**
 * A file the operator reads on every use, because whoever writes it (a projected volume, a
 * Secret) may replace it at any time: the agents' CA and the static agent token. Failures name
 * the file and the flag that chose it; `check` turns the text into the value, or gives the message
 * saying why it cannot (never quoting the text: it may be a secret).
 */
export function fileSource<T>(
  file: string,
  /** What the file is, e.g. "the agents' CA". */
  what: string,
  /** The flag that names it, with any hint, e.g. "--agent-ca-file". */
  flag: string,
  check: (text: string) => { readonly value: T } | { readonly problem: string },
): () => Promise<T> {
  return async () => {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (e) {
      throw new Error(
        `cannot read ${what} ${file} (${flag}): ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
        { cause: e },
      );
    }
    const checked = check(text);
    if ("problem" in checked) throw new Error(checked.problem);
    return checked.value;
  };
}

/** The agents' CA, re-read on every call (it may be rotated); a missing CA is an error, never the system roots. */
export function agentCaFromFile(file: string): () => Promise<string> {
  return fileSource<string>(
    file,
    "the agents' CA",
    "--agent-ca-file; --agent-allow-plain-http to call them without TLS",
    (pem) =>
      pem.includes("-----BEGIN CERTIFICATE-----")
        ? { value: pem }
        : { problem: `the agents' CA ${file} (--agent-ca-file) holds no PEM certificate` },
  );
}
