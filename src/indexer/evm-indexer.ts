import { decodeTransferLog } from '../chains/evm/abi.js';
import type { HeadNotifier } from '../chains/evm/new-heads.js';
import type { EvmBlockHeader, EvmLog, EvmSource } from '../chains/evm/types.js';
import { RangeTooLargeError } from '../chains/jsonrpc/rpc-client.js';
import type { ChainConfig } from '../config/types.js';
import { backoffDelay, type Settled, settle, sleep } from '../internal/async.js';
import { DEAD_ADDRESS, ZERO_ADDRESS } from '../internal/chains.js';
import { errorMessage, FatalIndexerError, TokenqueryError } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import type { BatchSeeds, StoreWriter, TokenMetadata, TransferRecord } from '../store/types.js';
import { createHolderSeeder, type HolderSeeder } from './holder-seeds.js';
import { progressForCatchUp } from './progress.js';
import { createRangePlanner } from './range-planner.js';
import { createSingleFlight } from './single-flight.js';

export interface EvmIndexerOptions {
  chain: ChainConfig;
  source: EvmSource;
  store: StoreWriter;
  logger: Logger;
  signal: AbortSignal;
  /** `eth_getLogs` requests kept in flight during backfill. Default 4. */
  concurrency?: number;
  /** Re-read every token's supply at least this often, in blocks. Default 1000. */
  supplyRefreshBlocks?: number;
  /** Blocks handled per step while following the head inside the unfinalized window. Default 100. */
  followChunk?: number;
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
  /**
   * New-head announcements (a websocket subscription): once caught up, the indexer waits for the
   * next block on them, and polls every `chain.pollIntervalMs` all the same in case they stop.
   * Default none: polling only.
   */
  heads?: HeadNotifier;
}

export interface EvmIndexer {
  /** Indexes until `signal` aborts. Rejects only on a fatal error (for example a reorg deeper than the window). */
  run(): Promise<void>;
  /**
   * A fault the RPC client is still retrying (see `onPersistentFault`): shown in `/status` as the
   * chain's last error until a batch commits or a step succeeds, so an operator sees a failing
   * node at once rather than after the retries run out.
   */
  reportRetriedFault(message: string): void;
}

/** A range fetched and decoded, ready to commit. */
interface FetchedRange {
  from: number;
  to: number;
  transfers: TransferRecord[];
  tokens: TokenMetadata[];
  /** Starting balances of holders first seen in the range, on a seeded chain. */
  seeds: BatchSeeds | undefined;
  logCount: number;
  /** Hash of block `to` (backfill: read beside the logs), recorded with the checkpoint. */
  toHash: string | null;
  /** Parent hash of block `from`: the range must continue the one before it. */
  fromParentHash: string | null;
}

/** Raised when the node's answers contradict each other mid-step (a reorg in progress); the step is retried. */
class InconsistentChainError extends TokenqueryError {
  override name = 'InconsistentChainError';
}

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
    tokens: [...tokens.values()],
    seeds,
    logCount: ranges.reduce((sum, range) => sum + range.logCount, 0),
    toHash: ranges[ranges.length - 1]!.toHash,
    fromParentHash: first.fromParentHash,
  };
}

/**
 * The EVM indexer for one chain: backfill with pipelined, adaptive `eth_getLogs`, then follow the
 * head block by block inside the unfinalized window, detecting reorgs by parent hash and rolling
 * back exactly. Every batch commits together with its checkpoint, so a crash at any moment resumes
 * with nothing lost and nothing counted twice.
 */
export function createEvmIndexer(options: EvmIndexerOptions): EvmIndexer {
  const { chain, source, store, signal } = options;
  const name = chain.name;
  const logger = options.logger.child({ component: 'indexer', chain: name });
  const concurrency = options.concurrency ?? 4;
  const maxReadyTransfers = options.maxReadyTransfers ?? 50_000;
  const minBatchTransfers = Math.min(options.minBatchTransfers ?? 20_000, maxReadyTransfers);
  const maxBatchWaitMs = options.maxBatchWaitMs ?? 200;
  const supplyRefreshBlocks = options.supplyRefreshBlocks ?? 1000;
  const followChunk = options.followChunk ?? 100;
  const planner = createRangePlanner({ initial: options.initialRange ?? 100 });
  /** Blocks per step while following; halves when the provider refuses a span. */
  let followSpan = followChunk;

  /** Next block to index. */
  let next = chain.fromBlock;
  /** Hash of `next - 1` when known: the parent the next block must name. */
  let tipHash: string | null = null;
  /** Newest head seen; never moves backwards (a load balancer may answer from a lagging node). */
  let headSeen = 0;
  /** Newest head recorded in the store's chain status. */
  let headWritten = 0;
  /** The head the last step polled. */
  let headPolled = 0;
  let lastErrorRecorded: string | null = null;
  let lastPeriodicRefresh = 0;
  let hasCheckpoint = false;
  /**
   * The block last refused even alone, and how many times in a row. A refusal can be transient (a
   * busy provider answers "too many results" now and then), so it stops the chain only when it
   * persists over {@link ALONE_REFUSALS_BEFORE_STOP} attempts, each after the step's backoff.
   */
  let refused = { block: -1, times: 0 };
  const knownTokens = new Set<string>();
  const metadataInFlight = new Map<string, Promise<TokenMetadata>>();
  /** Set up by `run` from the store (a restart seeds at the block the first run chose). */
  let seeder: HolderSeeder | null = null;

  // ---- supply refresh: single-flight, kicked after commits, never blocks indexing ----
  // Held while a rollback runs: no supply read may start or be recorded then (see `handleReorg`).
  const supplyRefresh = createSingleFlight({ run: refreshSupplies, signal, logger, what: 'supply refresh' });
  const kickSupplyRefresh = supplyRefresh.kick;

  async function refreshSupplies(): Promise<void> {
    for (;;) {
      if (signal.aborted || supplyRefresh.held) return;
      const checkpoint = await store.getCheckpoint(name);
      if (!checkpoint) return;
      const addresses = await store.tokensNeedingSupply(name, checkpoint.block - supplyRefreshBlocks, 100);
      if (addresses.length === 0) return;
      const supplies = await source.readSupplies(addresses, checkpoint.block);
      await store.updateSupplies(
        name,
        supplies.map((s) => ({ ...s, atBlock: checkpoint.block })),
      );
    }
  }

  // ---- helpers ----
  /** Records `headSeen` in the chain's status unless a write (a batch's, say) already did. */
  async function writeHead(): Promise<void> {
    if (headSeen <= headWritten) return;
    const head = headSeen;
    await store.setChainStatus(name, { head });
    headWritten = Math.max(headWritten, head);
  }

  async function recordError(message: string | null): Promise<void> {
    if (message === lastErrorRecorded) return;
    lastErrorRecorded = message;
    await store.setChainStatus(name, { lastError: message });
  }

  /**
   * Metadata of `addresses`, each read at most once at a time: addresses not already in flight
   * are read together in one JSON-RPC batch; a failed read is forgotten so the next attempt retries it.
   */
  function metadataOf(addresses: string[], atBlock: number): Promise<TokenMetadata[]> {
    const fresh = addresses.filter((a) => !metadataInFlight.has(a));
    if (fresh.length > 0) {
      const all = source.readTokenMetadata(fresh, atBlock);
      fresh.forEach((address, i) => {
        const one = all.then((list) => {
          const metadata = list[i];
          if (!metadata) throw new TokenqueryError(`no metadata answer for ${address}`);
          return metadata;
        });
        one.catch(() => metadataInFlight.delete(address));
        metadataInFlight.set(address, one);
      });
    }
    return Promise.all(addresses.map((a) => metadataInFlight.get(a)!));
  }

  /** Metadata of the tokens in `transfers` that the store does not know yet. */
  async function newTokenMetadata(transfers: TransferRecord[]): Promise<TokenMetadata[]> {
    const unknown: string[] = [];
    const seen = new Set<string>();
    for (const t of transfers) {
      if (knownTokens.has(t.token) || seen.has(t.token)) continue;
      seen.add(t.token);
      if (await store.getToken(name, t.token)) knownTokens.add(t.token);
      else unknown.push(t.token);
    }
    // Read at the batch's newest block, where every one of these tokens exists, not at `latest`:
    // a node behind a load balancer may not have a brand-new token yet (and then errs instead).
    return unknown.length === 0 ? [] : metadataOf(unknown, transfers[transfers.length - 1]!.blockNumber);
  }

  function decode(logs: EvmLog[], times: Map<number, number>): TransferRecord[] {
    const transfers: TransferRecord[] = [];
    for (const log of logs) {
      const time = log.blockTimestamp ?? times.get(log.blockNumber);
      if (time === undefined) throw new InconsistentChainError(`no timestamp for block ${log.blockNumber}`);
      const transfer = decodeTransferLog(log, time);
      if (transfer) transfers.push(transfer);
    }
    return transfers;
  }

  async function fetchRange(from: number, to: number): Promise<FetchedRange> {
    // The first block's parent and the last block's hash, read beside the logs: consecutive ranges
    // must chain (checked as they are queued), and the last hash goes with the checkpoint, so a
    // reorg deeper than the window is seen (and stops the chain) instead of the new fork's blocks
    // being stacked on the old fork's.
    const [{ transfers, logCount }, headers] = await Promise.all([
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
    const [tokens, seeds] = await Promise.all([newTokenMetadata(transfers), seedsFor(transfers)]);
    return { from, to, transfers, tokens, seeds, logCount, toHash, fromParentHash };
  }

  function seedsFor(transfers: TransferRecord[]): Promise<BatchSeeds | undefined> {
    return seeder === null ? Promise.resolve(undefined) : seeder.seedsFor(transfers);
  }

  async function commit(
    range: FetchedRange,
    extra: { toBlockHash: string | null; blocks: EvmBlockHeader[]; deferBalances?: boolean },
  ): Promise<void> {
    const head = headSeen;
    await store.applyBatch({
      chain: name,
      fromBlock: range.from,
      toBlock: range.to,
      toBlockHash: extra.toBlockHash,
      transfers: range.transfers,
      tokens: range.tokens,
      blocks: extra.blocks.map(({ number, hash, parentHash }) => ({ number, hash, parentHash })),
      head,
      pruneBlocksBelow: head - chain.finalityDepth,
      ...(range.seeds === undefined ? {} : { seeds: range.seeds }),
      ...(extra.deferBalances === true ? { deferBalances: true } : {}),
    });
    headWritten = Math.max(headWritten, head);
    for (const token of range.tokens) {
      knownTokens.add(token.address);
      metadataInFlight.delete(token.address);
    }
    seeder?.committed(range.seeds);
    next = range.to + 1;
    tipHash = extra.toBlockHash;
    hasCheckpoint = true;
    if (lastErrorRecorded !== null) await recordError(null); // progress: a fault reported mid-step is over
    if (range.to >= refused.block) refused = { block: -1, times: 0 };
    if (range.tokens.length > 0 || touchesSupply(range.transfers)) kickSupplyRefresh();
  }

  // ---- backfill: blocks at least `finalityDepth` below the head, pipelined ----
  async function backfill(target: number): Promise<void> {
    const progress = progressForCatchUp({
      chain: name,
      logger,
      startBlock: next,
      targetBlock: target,
      ...(options.tty === undefined ? {} : { tty: options.tty }),
    });
    let transfersDone = 0;
    const inflight: { from: number; to: number; result: Promise<Settled<FetchedRange>> }[] = [];
    const launch = (from: number, to: number) => ({ from, to, result: settle(fetchRange(from, to)) });
    let cursor = next;
    // The hash the next range's first block must name as its parent (null: not known).
    let expectedParent = tipHash;
    // Ranges fetched in order and waiting for a commit. They are merged into one batch when a
    // commit can start: the slower the store, the bigger (and cheaper per transfer) the next
    // batch. Fetching goes on meanwhile, until `maxReadyTransfers` are waiting.
    let ready: FetchedRange[] = [];
    let readyTransfers = 0;
    let readySince = 0;
    // Commits in flight, oldest first. A store that applies batches in call order (the SQLite
    // writer thread) gets the next batch while it commits one, so it never waits for this thread
    // to notice a commit ended and build the next batch; any other store gets one at a time.
    const committing: Promise<Settled<void>>[] = [];
    const commitDepth = store.ordersBatches === true ? 2 : 1;
    // Small batches cost more per transfer (every touched balance is written once per batch), so
    // a commit waits for `minBatchTransfers`, unless nothing more is coming or the wait gets long.
    const batchIsDue = (): boolean =>
      readyTransfers >= minBatchTransfers ||
      inflight.length === 0 ||
      performance.now() - readySince >= maxBatchWaitMs;
    const startCommit = (): void => {
      const batch = mergeRanges(ready);
      ready = [];
      readyTransfers = 0;
      // Balance rows may wait for a later batch while more of the backfill is coming; the last
      // batch writes them all (see IndexBatch.deferBalances).
      const deferBalances = cursor <= target || inflight.length > 0;
      committing.push(
        settle(
          commit(batch, { toBlockHash: batch.toHash, blocks: [], deferBalances }).then(() => {
            transfersDone += batch.transfers.length;
            progress?.update({ block: batch.to, transfers: transfersDone });
          }),
        ),
      );
    };

    try {
      while (!signal.aborted) {
        while (inflight.length < concurrency && cursor <= target && readyTransfers < maxReadyTransfers) {
          const to = Math.min(cursor + planner.size - 1, target);
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
        if (oldestCommit !== undefined) waits.push(oldestCommit.then(() => 'commit' as const));
        const first = await Promise.race(waits);
        if (signal.aborted) break;
        if (first === 'commit' && oldestCommit !== undefined) {
          const outcome: Settled<void> = await oldestCommit;
          committing.shift();
          if (!outcome.ok) throw outcome.error;
          continue;
        }
        if (head === undefined) continue;
        inflight.shift();
        const outcome = await head.result;
        if (!outcome.ok) {
          if (outcome.error instanceof RangeTooLargeError) {
            const span = head.to - head.from + 1;
            if (span === 1) throw refusedAlone(head.from, outcome.error);
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
        const outcome: Settled<void> = await pending;
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

  // ---- following the head inside the unfinalized window ----
  async function follow(head: number): Promise<void> {
    const to = Math.min(head, next + followSpan - 1);
    const numbers: number[] = [];
    for (let n = next; n <= to; n++) numbers.push(n);
    const headers = await source.getHeaders(numbers);
    // The first block ever indexed has no known parent. Backfill batches record their last block's
    // hash; a checkpoint written without one (by an older tokenquery) is final, so its hash is read
    // from the node.
    const parentHash = tipHash ?? (hasCheckpoint ? await hashOf(next - 1) : null);
    const first = headers[0];
    if (!first) return;
    if (parentHash !== null && first.parentHash !== parentHash) {
      await handleReorg();
      return;
    }
    for (let i = 1; i < headers.length; i++) {
      if (headers[i]?.parentHash !== headers[i - 1]?.hash) {
        throw new InconsistentChainError(`blocks ${next}..${to} changed while being read`);
      }
    }
    const byNumber = new Map(headers.map((h) => [h.number, h]));
    let logs: EvmLog[];
    try {
      // By block hash, not by range: a node behind a load balancer answers a range past its own
      // head with the blocks it has and no error (reth, anvil), and the newest transfers would be
      // lost without a trace (seen under fault injection); asked for a block hash it lacks, it errs.
      logs = await source.getTransferLogsOfBlocks(headers);
    } catch (error) {
      if (!(error instanceof RangeTooLargeError)) throw error;
      const span = to - next + 1;
      if (span === 1) throw refusedAlone(next, error);
      followSpan = Math.max(1, Math.floor(span / 2));
      return;
    }
    for (const log of logs) {
      if (byNumber.get(log.blockNumber)?.hash !== log.blockHash) {
        throw new InconsistentChainError(`logs of block ${log.blockNumber} belong to another fork`);
      }
    }
    const times = new Map(headers.map((h) => [h.number, h.timestamp]));
    const transfers = decode(logs, times);
    const [tokens, seeds] = await Promise.all([newTokenMetadata(transfers), seedsFor(transfers)]);
    const last = headers[headers.length - 1]!;
    // Grow back after a refusal (which halved the span): a refusal may have been transient.
    followSpan = Math.min(followChunk, followSpan * 2);
    await commit(
      {
        from: next,
        to,
        transfers,
        tokens,
        seeds,
        logCount: logs.length,
        toHash: last.hash,
        fromParentHash: first.parentHash,
      },
      { toBlockHash: last.hash, blocks: headers },
    );
  }

  function refusedAlone(block: number, cause: unknown): TokenqueryError {
    refused = { block, times: refused.block === block ? refused.times + 1 : 1 };
    const what = `the node refuses to return the Transfer logs of block ${block} even alone (${errorMessage(cause)})`;
    if (refused.times >= ALONE_REFUSALS_BEFORE_STOP)
      return new FatalIndexerError(`${what}; use a node without a result limit`);
    return new TokenqueryError(`${what}; retrying`);
  }

  async function hashOf(block: number): Promise<string | null> {
    const [header] = await source.getHeaders([block]);
    return header?.hash ?? null;
  }

  /** Caught up: make sure the tip we hold is still on the node's chain (a reorg need not grow the chain). */
  async function checkTip(head: number): Promise<void> {
    if (next === 0 || tipHash === null) return;
    const tip = next - 1;
    if (head < tip) return; // a lagging node: wait for it rather than trusting its view
    const [header] = await source.getHeaders([tip]);
    if (header && header.hash !== tipHash) await handleReorg();
  }

  async function handleReorg(): Promise<void> {
    const top = next - 1;
    const bottom = Math.max(top - chain.finalityDepth, 0);
    const refs = await store.getBlockRefs(name, bottom, top);
    const nodeHeaders = await source.getHeaders(refs.map((r) => r.number));
    let ancestor: { number: number; hash: string } | null = null;
    for (let i = refs.length - 1; i >= 0; i--) {
      const ref = refs[i]!;
      if (nodeHeaders[i]?.hash === ref.hash) {
        ancestor = { number: ref.number, hash: ref.hash };
        break;
      }
    }
    if (!ancestor) {
      throw new FatalIndexerError(
        `reorg deeper than the unfinalized window on ${name}: none of the stored blocks ${refs[0]?.number ?? top}..${top} is on the node's chain any more (window ${chain.finalityDepth} blocks); indexing of ${name} stopped to avoid corrupt data — raise the window and re-index from an earlier block`,
      );
    }
    // A supply read taken before the rollback (from the dropped blocks' state) and recorded after
    // it would clear the re-read mark the rollback sets, and its stale value would stay for up to
    // `supplyRefreshBlocks`: let the read in flight finish first, and start none meanwhile.
    const result = await supplyRefresh.hold(() => store.rollback(name, ancestor.number, ancestor.hash));
    logger.warn(
      { depth: top - ancestor.number, ancestor: ancestor.number, removedTransfers: result.removedTransfers },
      'reorg: rolled back to the common ancestor',
    );
    // Tokens first seen in the dropped blocks are gone from the store; forget them here too.
    for (const token of result.affectedTokens) knownTokens.delete(token);
    next = ancestor.number + 1;
    tipHash = ancestor.hash;
    kickSupplyRefresh();
  }

  async function step(): Promise<'busy' | 'idle'> {
    const head = await source.blockNumber();
    headPolled = head;
    options.heads?.polled(head);
    headSeen = Math.max(headSeen, head);
    // Periodic refresh (busy or idle: a chain that never idles must still get it): tokens whose
    // supply was read more than `supplyRefreshBlocks` ago, and any mark a failed read left.
    if (Date.now() - lastPeriodicRefresh > 10_000) {
      lastPeriodicRefresh = Date.now();
      kickSupplyRefresh();
    }
    const finalized = headSeen - chain.finalityDepth;
    if (next <= finalized) {
      await writeHead();
      // The tip may be inside the window (the indexer fell behind while following): a reorg below
      // it must be handled before blocks are stacked on it without their parents being checked.
      const tip = next;
      await checkTip(head);
      if (next !== tip) return 'busy';
      await backfill(finalized);
      return 'busy';
    }
    if (next <= head) {
      // The block's batch records the head too: a write of its own first would only delay the
      // block on its way to the API. Written here when no batch was (a reorg was handled instead).
      await follow(head);
      await writeHead();
      return 'busy';
    }
    await writeHead();
    await checkTip(head);
    return 'idle';
  }

  return {
    reportRetriedFault(message) {
      recordError(`${message} (retrying)`).catch(() => {});
    },
    async run() {
      const checkpoint = await store.getCheckpoint(name);
      if (checkpoint) {
        next = checkpoint.block + 1;
        tipHash = checkpoint.hash;
        hasCheckpoint = true;
        if (chain.fromBlock > next) {
          logger.warn(
            { checkpoint: checkpoint.block, fromBlock: chain.fromBlock },
            '--from-block is ignored: the store already holds this chain; resuming from its checkpoint',
          );
        }
      }
      const status = await store.getChainStatus(name);
      headSeen = status?.head ?? 0;
      headWritten = headSeen;
      // A chain that starts late seeds each new holder with its balance before the start; once it
      // has a checkpoint, the store says at which block (or that it is not seeded at all).
      const seedBlock = checkpoint
        ? (status?.seedBlock ?? null)
        : chain.fromBlock > 0
          ? chain.fromBlock - 1
          : null;
      if (status?.holdersPartial === true) {
        logger.warn(
          { seedBlock },
          'holder counts and balances are partial: the node had no state at the block before --from-block',
        );
      }
      seeder = createHolderSeeder({
        chain: name,
        source,
        store,
        logger,
        seedBlock,
        partial: status?.holdersPartial === true,
      });
      logger.info({ next, finalityDepth: chain.finalityDepth }, 'indexer starting');
      kickSupplyRefresh();

      let failures = 0;
      while (!signal.aborted) {
        try {
          const state = await step();
          failures = 0;
          await recordError(null);
          if (state === 'idle') {
            if (options.heads) await options.heads.waitForHead(headPolled, chain.pollIntervalMs, signal);
            else await sleep(chain.pollIntervalMs, signal);
          }
        } catch (error) {
          if (signal.aborted) break;
          if (error instanceof FatalIndexerError) {
            logger.error({ err: error.shortMessage }, 'indexer stopped');
            await recordError(error.shortMessage).catch(() => {});
            throw error;
          }
          failures++;
          const message = errorMessage(error);
          const delay = error instanceof InconsistentChainError ? 100 : backoffDelay(failures, 500, 30_000);
          logger.warn({ err: message, retryInMs: Math.round(delay) }, 'indexing step failed; retrying');
          await recordError(message).catch(() => {});
          await sleep(delay, signal);
        }
      }
      logger.info({ next }, 'indexer stopped');
    },
  };
}

/** Times in a row one block may be refused alone before the chain stops (see `refusedAlone`). */
const ALONE_REFUSALS_BEFORE_STOP = 5;

const BURN_ADDRESSES = new Set([ZERO_ADDRESS, DEAD_ADDRESS]);

/** Mints, burns and moves to/from burn addresses change total or circulating supply. */
function touchesSupply(transfers: TransferRecord[]): boolean {
  return transfers.some((t) => BURN_ADDRESSES.has(t.from) || BURN_ADDRESSES.has(t.to));
}
