import { destination, pino } from "pino";
import { redactSecrets } from "./redact";

/** One structured log entry: `msg` and the fields that go with it. */
export type LogEntry = Record<string, unknown>;
export type Log = (entry: LogEntry) => void;

export interface LogOptions {
  /** Receives one JSON log line at a time, without its newline. @default process.stderr, written synchronously */
  readonly writeLine?: (line: string) => void;
  /** The time stamped on each line, in ms since the epoch. @default Date.now */
  readonly now?: () => number;
}

/**
 * The log of a process's entry point (agent, operator): pino writing one JSON object per line,
 * `{"level":"info","time":"<ISO 8601>","msg":…,…}`, with tokens, authorization headers and bearer
 * strings redacted (./redact.ts) before anything is written.
 */
export function createLog(options: LogOptions = {}): Log {
  const now = options.now ?? Date.now;
  const writeLine = options.writeLine;
  const logger = pino(
    {
      base: undefined,
      timestamp: () => `,"time":"${new Date(now()).toISOString()}"`,
      formatters: {
        level: (label) => ({ level: label }),
        log: (entry) => redactSecrets(entry) as LogEntry,
      },
    },
    writeLine
      ? { write: (line: string) => writeLine(line.replace(/\n$/, "")) }
      : destination({ dest: 2, sync: true }),
  );
  return (entry) => logger.info(entry);
}
