/**
 * A stand-in lvm shell for LvmShell's and the runner's unit tests: a ShellProcess whose answers a test
 * scripts line by line, written in lvm 2.03.16's format (report on the report fd, then the command
 * log ending with the shell's status entry), or that hangs, dies, or writes to stderr.
 */
import type { ShellProcess, SpawnShell } from "../../../src/agent/lvm-shell";

export type FakeReply =
  | {
      readonly report?: string;
      /** Error entries of the command log. */
      readonly messages?: readonly string[];
      /** Print entries of the command log (what a write prints on stdout one-shot), before the errors. */
      readonly prints?: readonly string[];
      readonly retCode?: number;
      readonly stderr?: string;
    }
  | "hang"
  /** lvm asks a question on stderr and waits for the answer on stdin. */
  | { readonly prompt: string }
  | "die"
  /** The shell exits with status 5, no signal, without answering. */
  | "exit"
  | "garble";

/** The text lvm's shell writes to the report fd for one command. */
export function shellAnswerText(
  command: string,
  reply: { report?: string; messages?: readonly string[]; prints?: readonly string[]; retCode?: number },
): string {
  const entry = (type: string, message: string, ret: number) =>
    `          {"log_seq_num":"1", "log_type":"${type}", "log_context":"shell", "log_object_type":"cmd", "log_object_name":"${command}", "log_message":"${message}", "log_ret_code":"${ret}"}`;
  const retCode = reply.retCode ?? 1;
  const log = [
    ...(reply.prints ?? []).map((m) => entry("print", m, 0)),
    ...(reply.messages ?? []).map((m) => entry("error", m, 0)),
    entry("status", retCode === 1 ? "success" : "failure", retCode),
  ].join(",\n");
  const report = reply.report ? `  {\n      "report": [\n${reply.report}\n      ]\n      ,\n` : "  {\n";
  return `${report}      "log": [\n${log}\n      ]\n  }\n`;
}

/** A one-shot `--reportformat json` output with the same report rows. */
export function oneShotText(report: string): string {
  return `  {\n      "report": [\n${report}\n      ]\n  }\n`;
}

export class FakeLvmShell {
  /** Every process started, newest last. */
  readonly processes: FakeShellProcess[] = [];
  /** The argv and env of each start. */
  readonly starts: Array<{ argv: readonly string[]; env: NodeJS.ProcessEnv }> = [];
  /** Throw on spawn (as child_process.spawn does for some errors). */
  failSpawn = false;

  /** `reply(line)`: what the shell answers to each line written (the start probe `formats` included). */
  constructor(public reply: (line: string) => FakeReply = () => ({})) {}

  readonly spawn: SpawnShell = (argv, env) => {
    if (this.failSpawn) throw new Error("spawn failed");
    this.starts.push({ argv, env });
    const p = new FakeShellProcess(this, 1000 + this.processes.length);
    this.processes.push(p);
    return p;
  };

  get current(): FakeShellProcess | undefined {
    return this.processes[this.processes.length - 1];
  }
}

export class FakeShellProcess implements ShellProcess {
  readonly lines: string[] = [];
  readonly signals: string[] = [];
  ended = false;
  private readonly listeners = { report: [], stdout: [], stderr: [] } as Record<
    "report" | "stdout" | "stderr",
    Array<(chunk: string) => void>
  >;
  private readonly exitListeners: Array<(code: number | null, signal: string | null) => void> = [];
  private exit: [number | null, string | null] | undefined;
  /** While true (SIGSTOP), SIGTERM does nothing. */
  stopped = false;

  constructor(
    private readonly shell: FakeLvmShell,
    readonly pid: number,
  ) {}

  write(text: string): void {
    if (this.exit) return;
    this.lines.push(text);
    const reply = this.shell.reply(text);
    setImmediate(() => {
      if (this.exit) return;
      if (reply === "hang") return;
      if (reply === "die") return this.die(null, "SIGKILL");
      if (reply === "exit") return this.die(5, null);
      if (reply === "garble") return this.emit("report", "  {\n  }\n");
      if ("prompt" in reply) return this.emit("stderr", reply.prompt);
      if (reply.stderr) this.emit("stderr", reply.stderr);
      const command = text.trim().split(" ")[0]!.replace(/'/g, "");
      // Split in two chunks, as a pipe may deliver it.
      const answer = shellAnswerText(command, reply);
      const cut = Math.floor(answer.length / 2);
      this.emit("report", answer.slice(0, cut));
      setImmediate(() => this.emit("report", answer.slice(cut)));
    });
  }

  end(): void {
    this.ended = true;
    if (!this.stopped) setImmediate(() => this.die(0, null));
  }

  onData(stream: "report" | "stdout" | "stderr", listener: (chunk: string) => void): void {
    this.listeners[stream].push(listener);
  }

  onExit(listener: (code: number | null, signal: string | null) => void): void {
    if (this.exit) listener(this.exit[0], this.exit[1]);
    else this.exitListeners.push(listener);
  }

  killGroup(signal: NodeJS.Signals): void {
    this.signals.push(signal);
    if (signal === "SIGKILL" || !this.stopped) setImmediate(() => this.die(null, signal));
  }

  emit(stream: "report" | "stdout" | "stderr", chunk: string): void {
    for (const l of this.listeners[stream]) l(chunk);
  }

  die(code: number | null, signal: string | null): void {
    if (this.exit) return;
    this.exit = [code, signal];
    for (const l of this.exitListeners.splice(0)) l(code, signal);
  }

  get alive(): boolean {
    return this.exit === undefined;
  }
}
