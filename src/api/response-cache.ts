/**
 * An exact cache of whole answers (the serialized JSON body, UTF-8 encoded) of the read
 * operations, keyed by operation and normalized parameters.
 *
 * Exact: every entry belongs to one value of the store's `readVersion()`, a counter that moves
 * whenever anything the store answers may have changed (this process's writes at once, another
 * process's commits within a few milliseconds, see `DATA_VERSION_CHECK_MS` in the SQLite store).
 * When it moves, every entry is dropped, so an answer is never older than the data it would be
 * computed from now, give or take that delay. An answer computed while the version moved is not
 * kept. Bounded: at most `maxBytes` of bodies and `maxEntries` entries, oldest dropped first
 * (first in, first out: a hit costs one map lookup, and every entry lives only until the data
 * next changes anyway, which an indexer following a chain does every block).
 *
 * An answer is kept the second time its key is asked for, not the first (`admitOnSecondRequest`),
 * and only when it is asked for again soon enough to still be in the cache the next time: a
 * client walking through many pages asks each one once, or comes back to it only after more other
 * pages than the cache holds, and keeping those answers only churned the cache (first in, first
 * out: no hit at all). Each kept body outlived a few young-generation GCs and waited for a full
 * one, so evicted bodies piled up beside the cache: more memory, and slower answers than with no
 * cache at all (docs/benchmarks.md, Growth). So the keys seen once are remembered, oldest
 * forgotten first, only as many as the cache holds answers of the recent mean size, and across
 * version changes (popularity is not data).
 */

export interface ResponseCacheOptions {
  /** The store's change counter (`Store.readVersion`). */
  version: () => number;
  /** Most bytes of bodies kept. Default 32 MiB. */
  maxBytes?: number;
  /** Most entries kept. Default 16 384. */
  maxEntries?: number;
  /** Keep an answer only when its key was asked for before (see above). Default true. */
  admitOnSecondRequest?: boolean;
}

export interface ResponseCache {
  /**
   * Reads the store's version, dropping every entry when it moved, and returns it. Call before
   * `get`, and pass the result to `set` for an answer computed after it.
   */
  validate(): number;
  /** The body kept for `key`, or undefined. */
  get(key: string): Buffer | undefined;
  /**
   * Keeps `body` for `key` when the version is still `version` (the data did not move while it was
   * computed) and the key has earned a place; true when the cache now holds it.
   */
  set(key: string, body: Buffer, version: number): boolean;
  /** The most entries kept. */
  readonly maxEntries: number;
  /** Entries and bytes kept right now (for tests and metrics). */
  readonly size: { entries: number; bytes: number };
}

export function createResponseCache(options: ResponseCacheOptions): ResponseCache {
  const maxBytes = options.maxBytes ?? 32 * 1024 * 1024;
  const maxEntries = Math.max(1, options.maxEntries ?? 16_384);
  // Insertion-ordered: the first entry is the oldest.
  const entries = new Map<string, Buffer>();
  /** Keys asked for once and not kept yet; insertion-ordered, oldest first. */
  const seenOnce = new Set<string>();
  const admitOnSecondRequest = options.admitOnSecondRequest ?? true;
  /** Moving mean of the answers' sizes: how many of them the byte bound lets the cache hold. */
  let meanBytes = 0;
  let bytes = 0;
  let current = Number.NaN;

  const clear = (): void => {
    entries.clear();
    bytes = 0;
  };

  return {
    validate() {
      const version = options.version();
      if (version !== current) {
        current = version;
        clear();
      }
      return version;
    },
    get(key) {
      return entries.get(key);
    },
    set(key, body, version) {
      if (version !== current || body.length > maxBytes) return false;
      meanBytes = meanBytes === 0 ? body.length : meanBytes + (body.length - meanBytes) / 64;
      if (admitOnSecondRequest && !entries.has(key) && !seenOnce.delete(key)) {
        seenOnce.add(key);
        const reach = Math.max(1, Math.min(maxEntries, Math.floor(maxBytes / Math.max(1, meanBytes))));
        while (seenOnce.size > reach) seenOnce.delete(seenOnce.values().next().value as string);
        return false;
      }
      const old = entries.get(key);
      if (old !== undefined) {
        entries.delete(key);
        bytes -= old.length;
      }
      while (entries.size > 0 && (entries.size >= maxEntries || bytes + body.length > maxBytes)) {
        const [oldestKey, oldest] = entries.entries().next().value as [string, Buffer];
        entries.delete(oldestKey);
        bytes -= oldest.length;
      }
      entries.set(key, body);
      bytes += body.length;
      return true;
    },
    maxEntries,
    get size() {
      return { entries: entries.size, bytes };
    },
  };
}
