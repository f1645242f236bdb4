/**
 * Each chain's indexing progress and throughput, as `/metrics` and the dashboard show them.
 *
 * Everything is read from the store, which is shared by every process of a deployment: `start`
 * (indexer in a worker thread), and `serve` beside one or more `index` processes alike. Once a
 * second the tracker reads the chains' status (head, indexed block) and activity (transfer
 * count); rates are differences between readings over a trailing window. One reading costs a
 * few single-row queries, whoever is watching, and requests never query for these figures.
 */
import { errorMessage } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import type { ChainStatus, StoreReader, TransferRecord } from '../store/types.js';

export interface ChainProgressOptions {
  store: { reader: StoreReader };
  /** Chains to follow, in display order. */
  chains: readonly string[];
  logger: Logger;
  /** Time between readings. Default 1000 ms. */
  intervalMs?: number;
  /** History kept for the throughput chart. Default 10 minutes. */
  keepMs?: number;
  /** Rates average over this trailing window. Default 10 000 ms. */
  rateWindowMs?: number;
  /** How often the store's size is read (a file stat, or one query). Default 10 000 ms. */
  sizeIntervalMs?: number;
  /** Clock, Unix ms (tests). */
  now?: () => number;
}

/** One chain's figures at the last reading. */
export interface ChainFigures {
  chain: string;
  /** Newest block seen on the node; 0 before the first sighting. */
  head: number;
  /** Newest block fully indexed; 0 before the first batch. */
  indexed: number;
  /** `head - indexed`, never below 0. */
  lag: number;
  /** Transfers indexed; null when the store cannot tell. */
  transfers: number | null;
  /** Blocks indexed per second over the rate window. */
  blocksPerSecond: number;
  /** Transfers indexed per second over the rate window; null when the store cannot tell. */
  transfersPerSecond: number | null;
  /** The indexer's last error, or null. */
  lastError: string | null;
  /** Unix ms of the chain's last status update; 0 before any. */
  updatedAt: number;
}

/** The kept history: reading times (Unix ms) and each chain's rates at those times. */
export interface ThroughputHistory {
  times: number[];
  chains: Record<string, { blocksPerSecond: number[]; transfersPerSecond: (number | null)[] }>;
}

export interface ChainProgressTracker {
  /** Takes one reading now (the timer takes one every `intervalMs`). */
  sample(): Promise<void>;
  current(): ChainFigures[];
  history(): ThroughputHistory;
  /** The newest transfers of a chain at the last reading, newest first. */
  recent(chain: string): readonly TransferRecord[];
  /** Bytes the store takes, as last read; null when the store cannot tell. */
  storageBytes(): number | null;
  /** Unix ms of the last successful reading; 0 before the first. */
  lastSampleAt(): number;
  /** Stops the timer. */
  close(): void;
}

interface Reading {
  t: number;
  /** Null before the chain's first batch: the first checkpoint is no measure of speed. */
  indexed: number | null;
  transfers: number | null;
}

export function createChainProgressTracker(options: ChainProgressOptions): ChainProgressTracker {
  const { store, chains, logger } = options;
  const intervalMs = options.intervalMs ?? 1000;
  const keepMs = options.keepMs ?? 10 * 60_000;
  const rateWindowMs = options.rateWindowMs ?? 10_000;
  const sizeIntervalMs = options.sizeIntervalMs ?? 10_000;
  const now = options.now ?? Date.now;

  /** Raw readings within the rate window (plus one older), per chain. */
  const readings = new Map<string, Reading[]>(chains.map((c) => [c, []]));
  const figures = new Map<string, ChainFigures>(chains.map((c) => [c, emptyFigures(c)]));
  const recent = new Map<string, readonly TransferRecord[]>();
  const history: ThroughputHistory = {
    times: [],
    chains: Object.fromEntries(chains.map((c) => [c, { blocksPerSecond: [], transfersPerSecond: [] }])),
  };
  let size: number | null = null;
  let sizeReadAt = Number.NEGATIVE_INFINITY;
  let lastSampleAt = 0;
  let failing = false;
  let inFlight: Promise<void> | null = null;

  async function read(): Promise<void> {
    const t = now();
    const statuses = new Map<string, ChainStatus>(
      (await store.reader.listChainStatuses()).map((s) => [s.chain, s]),
    );
    const activities = await Promise.all(
      chains.map((chain) =>
        store.reader.getChainActivity ? store.reader.getChainActivity(chain) : Promise.resolve(null),
      ),
    );
    if (store.reader.storageBytes !== undefined && t - sizeReadAt >= sizeIntervalMs) {
      size = await store.reader.storageBytes();
      sizeReadAt = t;
    }
    history.times.push(t);
    chains.forEach((chain, i) => {
      const status = statuses.get(chain);
      const activity = activities[i] ?? null;
      const head = status?.head ?? 0;
      const indexed = status?.indexed ?? 0;
      const transfers = store.reader.getChainActivity === undefined ? null : (activity?.transfers ?? 0);
      const list = readings.get(chain)!;
      list.push({ t, indexed: status?.indexed ?? null, transfers });
      // Keep one reading at or beyond the window's start, so the rate spans the whole window.
      while (list.length > 2 && t - list[1]!.t >= rateWindowMs) list.shift();
      // From the oldest reading in the window that has the figure (a chain's first checkpoint is
      // where it starts, not a measure of speed); a rollback lowers figures, yet a rate is never negative.
      const rate = (pick: (r: Reading) => number | null): number | null => {
        const latest = pick(list.at(-1)!);
        const base = list.find((r) => pick(r) !== null);
        if (latest === null || base === undefined) return null;
        const seconds = (t - base.t) / 1000;
        return seconds > 0 ? Math.max(0, (latest - pick(base)!) / seconds) : 0;
      };
      const blocksPerSecond = rate((r) => r.indexed) ?? 0;
      const transfersPerSecond = rate((r) => r.transfers);
      figures.set(chain, {
        chain,
        head,
        indexed,
        lag: Math.max(0, head - indexed),
        transfers,
        blocksPerSecond,
        transfersPerSecond,
        lastError: status?.lastError ?? null,
        updatedAt: status?.updatedAt ?? 0,
      });
      history.chains[chain]!.blocksPerSecond.push(blocksPerSecond);
      history.chains[chain]!.transfersPerSecond.push(transfersPerSecond);
      recent.set(chain, activity?.recent ?? []);
    });
    while (history.times.length > 0 && t - history.times[0]! > keepMs) {
      history.times.shift();
      for (const chain of chains) {
        history.chains[chain]!.blocksPerSecond.shift();
        history.chains[chain]!.transfersPerSecond.shift();
      }
    }
    lastSampleAt = t;
  }

  async function sample(): Promise<void> {
    // One reading at a time: a slow store must not pile readings up.
    inFlight ??= read()
      .then(
        () => {
          if (failing) logger.info('chain progress readings work again');
          failing = false;
        },
        (error: unknown) => {
          // Once per failure streak: a store that is down says so on /healthz already.
          if (!failing) logger.warn({ err: errorMessage(error) }, 'chain progress reading failed');
          failing = true;
        },
      )
      .finally(() => {
        inFlight = null;
      });
    return inFlight;
  }

  void sample();
  const timer = setInterval(() => void sample(), intervalMs);
  timer.unref();

  return {
    sample,
    current: () => chains.map((c) => figures.get(c)!),
    history: () => history,
    recent: (chain) => recent.get(chain) ?? [],
    storageBytes: () => size,
    lastSampleAt: () => lastSampleAt,
    close() {
      clearInterval(timer);
    },
  };
}

function emptyFigures(chain: string): ChainFigures {
  return {
    chain,
    head: 0,
    indexed: 0,
    lag: 0,
    transfers: null,
    blocksPerSecond: 0,
    transfersPerSecond: null,
    lastError: null,
    updatedAt: 0,
  };
}
