/**
 * Integer settings the provider reads from its environment (the engine starts the provider with
 * the user's environment, so this is how a user tunes it without a program change). One parser, so
 * every such variable accepts and refuses the same texts, with the same error.
 */
export interface IntegerSetting {
  /** The environment variable, e.g. PULUMI_LVM_AGENT_CONCURRENCY. */
  readonly name: string;
  /** Used when the variable is unset or blank. */
  readonly fallback: number;
  /** The smallest value accepted (1 for a count, 0 for a wait that may be off). */
  readonly min: number;
  /** What the number means, for the error, e.g. "agents asked at a time". */
  readonly meaning: string;
}

/** The setting's value: the variable as an integer ≥ min, else a clear error; unset or blank → fallback. */
export function integerFromEnv(env: NodeJS.ProcessEnv, setting: IntegerSetting): number {
  const raw = env[setting.name];
  if (raw === undefined || raw.trim() === "") return setting.fallback;
  const n = Number(raw.trim());
  if (!Number.isInteger(n) || n < setting.min)
    throw new Error(
      `${setting.name}=${JSON.stringify(raw)}: must be ${setting.min === 1 ? "a positive integer" : setting.min === 0 ? "a whole number, 0 or more" : `an integer ≥ ${setting.min}`} (${setting.meaning})`,
    );
  return n;
}
