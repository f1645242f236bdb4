/**
 * The EVM backfill: blocks at least `finalityDepth` below the head, fetched with pipelined,
 * adaptive `eth_getLogs` and committed in merged batches (balance rows deferred to the last one),
 * the commits themselves pipelined as deep as the store allows (`ordersBatches`). Head-following
 * and reorgs are evm-realtime.ts's.
 */

import type { EvmSource } from '../chains/evm/types.js';
import { RangeTooLargeError } from '../chains/jsonrpc/rpc-client.js';
import { type Settled, settle } from '../internal/async.js';
import { errorMessage, isDiskFull } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import type { BatchSeeds, StoreWriter, TokenMetadata } from '../store/types.js';
import {
  type EvmCommit,
  type EvmPosition,
  type EvmTokensAndSeeds,
  type FetchedRange,
  InconsistentChainError,
  type Refusals,
} from './evm-batch.js';
import { progressForCatchUp } from './progress.js';
import { createRangePlanner } from './range-planner.js';

/** How the backfill is paced (see EvmIndexerOptions, which extends it). */
export interface EvmBackfillTuning {
  /** `eth_getLogs` requests kept in flight during backfill. Default 4. */
  concurrency?: number;
  /** Draw a progress bar (TTY) instead of periodic log lines. Default: stderr is a TTY. */
  tty?: boolean;
  /** First span tried by `eth_getLogs` during backfill; it then adapts to the density. Default 100 blocks. */
  initialRange?: number;
  /**
   * Backfill stops fetching while this many decoded transfers wait for the store (bounds memory
   * when the store is slower than the node). Default 50,000.
   */
  maxReadyTransfers?: number;
  /**
   * Backfill commits once this many transfers are ready (or fetching is done, or the oldest ready
   * range has waited `maxBatchWaitMs`): a bigger batch writes each touched balance once for more
   * transfers, and commits less often. Default 20,000.
   */
  minBatchTransfers?: number;
  /** See `minBatchTransfers`. Default 200 ms. */
  maxBatchWaitMs?: number;
}

export interface EvmBackfillOptions extends EvmBackfillTuning {
  chain: string;
  source: EvmSource;
  /** Read for `ordersBatches` only: commits go through `commit`. */
  store: StoreWriter;
  logger: Logger;
  signal: AbortSignal;
  position: EvmPosition;
  commit: EvmCommit;
  tokensAndSeeds: EvmTokensAndSeeds;
  refusals: Refusals;
}

export interface EvmBackfill {
  /** Indexes `position.next..target` (all final), until done, failed or aborted; never leaves a commit running. */
  backfill(target: number): Promise<void>;
}

export function createEvmBackfill(options: EvmBackfillOptions): EvmBackfill {
  const { chain: name, source, store, logger, signal, position, commit, tokensAndSeeds, refusals } = options;
  const concurrency = options.concurrency ?? 4;
  const maxReadyTransfers = options.maxReadyTransfers ?? 50_000;
  const minBatchTransfers = Math.min(options.minBatchTransfers ?? 20_000, maxReadyTransfers);
  const maxBatchWaitMs = options.maxBatchWaitMs ?? 200;
  const planner = createRangePlanner({ initial: options.initialRange ?? 100 });
  // The most blocks one commit (and one fetch) spans. A commit that failed on a full disk is
  // retried in batches of half its span, down to one block, so a disk with a little room left
  // still takes the backfill on in pieces instead of failing on one large batch forever; every
  // commit that succeeds doubles it again. Kept across calls: the indexer's retry calls
  // `backfill` anew.
  let spanCap = Number.POSITIVE_INFINITY;
  const noteCommit = (span: number, outcome: Settled<void>): void => {
    if (outcome.ok) {
      if (spanCap !== Number.POSITIVE_INFINITY)
        spanCap = spanCap >= MAX_SPAN_CAP ? Number.POSITIVE_INFINITY : spanCap * 2;
    } else if (isDiskFull(outcome.error)) {
      const cap = Math.max(1, Math.floor(Math.min(spanCap, span) / 2));
      if (cap < spanCap) logger.debug({ blocks: cap }, 'the disk is full: committing smaller batches');
      spanCap = cap;
    }
  };

  async function fetchRange(from: number, to: number): Promise<FetchedRange> {
    // The first block's parent and the last block's hash, read beside the logs: consecutive ranges
    // must chain (checked as they are queued), and the last hash goes with the checkpoint, so a
    // reorg deeper than the window is seen (and stops the chain) instead of the new fork's blocks
    // being stacked on the old fork's.
    const [{ transfers, events, logCount }, headers] = await Promise.all([
      source.getTransfers(from, to),
      source.getHeaders(from === to ? [to] : [from, to]),
    ]);
    const fromParentHash = headers[0]!.parentHash;
    const toHash = headers[headers.length - 1]!.hash;
    // Nodes that send no `blockTimestamp` in logs: the headers of those blocks, in one batch
    // (the first and last block's are here already).
    const times = new Map(headers.map((header) => [header.number, header.timestamp]));
    const untimed = new Set<number>();
    for (const t of transfers) if (t.time === -1 && !times.has(t.blockNumber)) untimed.add(t.blockNumber);
    if (untimed.size > 0) {
      for (const header of await source.getHeaders([...untimed])) times.set(header.number, header.timestamp);
    }
    for (const t of transfers) {
      if (t.time !== -1) continue;
      const time = times.get(t.blockNumber);
      if (time === undefined) throw new InconsistentChainError(`no timestamp for block ${t.blockNumber}`);
      t.time = time;
    }
    const { changes, tokens, seeds } = await tokensAndSeeds(transfers, events);
    return { from, to, transfers, changes, tokens, seeds, logCount, toHash, fromParentHash };
  }

  async function backfill(target: number): Promise<void> {
    const progress = progressForCatchUp({
      chain: name,
      logger,
      startBlock: position.next,
      targetBlock: target,
      ...(options.tty === undefined ? {} : { tty: options.tty }),
    });
    let transfersDone = 0;
    const inflight: { from: number; to: number; result: Promise<Settled<FetchedRange>> }[] = [];
    const launch = (from: number, to: number) => ({ from, to, result: settle(fetchRange(from, to)) });
    let cursor = position.next;
    // The hash the next range's first block must name as its parent (null: not known).
    let expectedParent = position.tipHash;
    // Ranges fetched in order and waiting for a commit. They are merged into one batch when a
    // commit can start: the slower the store, the bigger (and cheaper per transfer) the next
    // batch. Fetching goes on meanwhile, until `maxReadyTransfers` are waiting.
    let ready: FetchedRange[] = [];
    let readyTransfers = 0;
    let readySince = 0;
    // Commits in flight, oldest first. A store that applies batches in call order (the SQLite
    // writer thread) gets the next batch while it commits one, so it never waits for this thread
    // to notice a commit ended and build the next batch; any other store gets one at a time.
    const committing: { span: number; outcome: Promise<Settled<void>> }[] = [];
    const commitDepth = store.ordersBatches === true ? 2 : 1;
    // Small batches cost more per transfer (every touched balance is written once per batch), so
    // a commit waits for `minBatchTransfers`, unless nothing more is coming or the wait gets long.
    const batchIsDue = (): boolean =>
      readyTransfers >= minBatchTransfers ||
      inflight.length === 0 ||
      performance.now() - readySince >= maxBatchWaitMs;
    const startCommit = (): void => {
      let taken = 1;
      while (taken < ready.length && ready[taken]!.to - ready[0]!.from + 1 <= spanCap) taken += 1;
      const batch = mergeRanges(ready.slice(0, taken));
      ready = ready.slice(taken);
      readyTransfers -= batch.transfers.length;
      readySince = performance.now();
      // Balance rows may wait for a later batch while more of the backfill is coming; the last
      // batch writes them all (see IndexBatch.deferBalances).
      const deferBalances = cursor <= target || inflight.length > 0 || ready.length > 0;
      committing.push({
        span: batch.to - batch.from + 1,
        outcome: settle(
          commit(batch, { toBlockHash: batch.toHash, blocks: [], deferBalances }).then(() => {
            transfersDone += batch.transfers.length;
            progress?.update({ block: batch.to, transfers: transfersDone });
          }),
        ),
      });
    };

    try {
      while (!signal.aborted) {
        while (inflight.length < concurrency && cursor <= target && readyTransfers < maxReadyTransfers) {
          const to = Math.min(cursor + Math.min(planner.size, spanCap) - 1, target);
          inflight.push(launch(cursor, to));
          cursor = to + 1;
        }
        if (committing.length < commitDepth && ready.length > 0 && batchIsDue()) startCommit();
        const head = inflight[0];
        const oldestCommit = committing[0];
        if (head === undefined && oldestCommit === undefined) break;
        // Whichever settles first: the oldest fetch, or the oldest commit in flight.
        const waits: Promise<'fetch' | 'commit'>[] = [];
        if (head !== undefined) waits.push(head.result.then(() => 'fetch' as const));
        if (oldestCommit !== undefined) waits.push(oldestCommit.outcome.then(() => 'commit' as const));
        const first = await Promise.race(waits);
        if (signal.aborted) break;
        if (first === 'commit' && oldestCommit !== undefined) {
          const outcome: Settled<void> = await oldestCommit.outcome;
          committing.shift();
          noteCommit(oldestCommit.span, outcome);
          if (!outcome.ok) throw outcome.error;
          continue;
        }
        if (head === undefined) continue;
        inflight.shift();
        const outcome = await head.result;
        if (!outcome.ok) {
          if (outcome.error instanceof RangeTooLargeError) {
            const span = head.to - head.from + 1;
            if (span === 1) throw refusals.refusedAlone(head.from, outcome.error);
            planner.refused(span);
            const mid = head.from + Math.floor(span / 2) - 1;
            inflight.unshift(launch(head.from, mid), launch(mid + 1, head.to));
            continue;
          }
          throw outcome.error;
        }
        const range = outcome.value;
        if (expectedParent !== null && range.fromParentHash !== expectedParent) {
          throw new InconsistentChainError(
            `block ${range.from} does not follow block ${range.from - 1} as fetched: the chain reorganised during the backfill`,
          );
        }
        expectedParent = range.toHash;
        planner.observe(range.to - range.from + 1, range.logCount);
        if (ready.length === 0) readySince = performance.now();
        ready.push(range);
        readyTransfers += range.transfers.length;
      }
    } finally {
      // Never leave a commit running behind the caller's back (a rollback or a new backfill
      // must start from the checkpoint it writes).
      let committed = true;
      for (const pending of committing) {
        const outcome: Settled<void> = await pending.outcome;
        noteCommit(pending.span, outcome);
        committed &&= outcome.ok;
        if (!outcome.ok && !signal.aborted)
          logger.debug({ error: errorMessage(outcome.error) }, 'commit failed');
      }
      // A shutdown keeps what is already fetched: the ranges waiting for a batch are committed
      // (they continue the checkpoint just written), so a restart does not fetch them again.
      if (signal.aborted && committed && ready.length > 0) {
        const batch = mergeRanges(ready);
        await commit(batch, { toBlockHash: batch.toHash, blocks: [] }).catch((error: unknown) =>
          logger.debug({ error: errorMessage(error) }, 'final commit at shutdown failed'),
        );
      }
      progress?.finish();
    }
  }

  return { backfill };
}

/** A span cap this large is no cap: the disk took batches this long again after being full. */
const MAX_SPAN_CAP = 1 << 20;

/**
 * Consecutive fetched ranges as one: the transfers stay in chain order, each new token once.
 */
function mergeRanges(ranges: FetchedRange[]): FetchedRange {
  const [first] = ranges;
  if (first === undefined) throw new RangeError('nothing to merge');
  if (ranges.length === 1) return first;
  const tokens = new Map<string, TokenMetadata>();
  for (const range of ranges) for (const token of range.tokens) tokens.set(token.address, token);
  let seeds: BatchSeeds | undefined;
  for (const range of ranges) {
    if (range.seeds === undefined) continue;
    seeds = {
      block: range.seeds.block,
      // The store keeps the first seed of a pair named twice; both were read at the same block.
      balances: [...(seeds?.balances ?? []), ...range.seeds.balances],
      partial: (seeds?.partial ?? false) || range.seeds.partial,
    };
  }
  return {
    from: first.from,
    to: ranges[ranges.length - 1]!.to,
    transfers: ranges.flatMap((range) => range.transfers),
    changes: ranges.flatMap((range) => range.changes),
    tokens: [...tokens.values()],
    seeds,
    logCount: ranges.reduce((sum, range) => sum + range.logCount, 0),
    toHash: ranges[ranges.length - 1]!.toHash,
    fromParentHash: first.fromParentHash,
  };
}
