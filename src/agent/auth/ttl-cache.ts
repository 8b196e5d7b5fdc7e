export interface TtlCacheOptions {
  /** How long an entry lives. */
  readonly ttlMs: number;
  /** At most this many entries; the least recently used goes first. @default 1024 */
  readonly maxEntries?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

/** A small bounded cache with expiry, least recently used evicted first (a Map keeps insertion order). */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(private readonly options: TtlCacheOptions) {
    this.maxEntries = options.maxEntries ?? 1024;
    this.now = options.now ?? Date.now;
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expires <= this.now()) return undefined;
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V, ttlMs = this.options.ttlMs): void {
    if (ttlMs <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { value, expires: this.now() + ttlMs });
    while (this.entries.size > this.maxEntries)
      this.entries.delete(this.entries.keys().next().value as string);
  }

  get size(): number {
    return this.entries.size;
  }
}
