/**
 * `tokenquery import`: loads decoded ERC-20 transfers from ethereum-etl / BigQuery
 * `token_transfers` exports into the store, as the indexer would have written them, so that
 * `tokenquery index` then goes on from the last imported block.
 *
 * Two phases. Reading: every file is streamed, every row checked, and the rows go into a
 * temporary SQLite file that sorts them (exports are often unordered; see `staging.ts`); with
 * `sorted: true` that step is skipped and the order is verified instead. Writing: rows come back
 * in chain order and are committed in batches of whole blocks, each batch with its checkpoint in
 * one transaction (the store's `applyBatch`), so an interrupted import resumes by running it again:
 * rows at or below the checkpoint are skipped (into a chain without transfers the SQLite store takes
 * the batches as a bulk load: see `schedule`). Block times, transaction positions and token
 * metadata the export lacks are read from the node, for the next batches while one commits.
 */
import { statSync } from 'node:fs';
import { errorMessage, UserError } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import type { ExactnessUpdate, Store, SupplyUpdate } from '../store/types.js';
import { createBatchPreparer } from './batch-preparation.js';
import { ImportInputError, type ImportRow } from './columns.js';
import { displayName, type InputFormat, readExport } from './input.js';
import type { ImportNode } from './node-reader.js';
import { createImportProgress } from './progress.js';
import { checkColumns, createRowCheck } from './row-checks.js';
import { createStaging, type Staging, sameTransfer } from './staging.js';
import { createTokenLookup } from './token-lookup.js';

export interface ImportOptions {
  store: Store;
  /** Chain name (`eth`, ...). */
  chain: string;
  /** Export files, in order; `-` reads standard input. */
  inputs: readonly string[];
  /** Forces the format of every input; detected per file when absent. */
  format?: InputFormat;
  /** The node that supplies what the export lacks; null when none is given. */
  node: ImportNode | null;
  logger: Logger;
  /** Aborting stops after the batch being committed; running the import again resumes. */
  signal?: AbortSignal;
  /** The input is already in chain order: skip the sort file and verify the order instead. Default false. */
  sorted?: boolean;
  /** Directory for the sort file. */
  tmpDir: string;
  /** First block the export covers (default: the block of its first row). */
  fromBlock?: number;
  /** Last block the export covers (default: the block of its last row); the checkpoint ends there. */
  toBlock?: number;
  /** Blocks below the head that may still reorg; their hashes are recorded. Default 64. */
  finalityDepth?: number;
  /** Transfers per committed batch (batches end on block boundaries). Default 20,000. */
  batchTransfers?: number;
  /** Batches prepared (node reads) ahead of the one committing. Default 2. */
  concurrency?: number;
  /** Progress bar on stderr instead of log lines. Default: stderr is a TTY. */
  tty?: boolean;
  /**
   * Let the store take the batches as a bulk load (`IndexBatch.bulkLoad`: appended as they come,
   * everything else built after the load, sorted). Default true; false applies every batch row by
   * row, as the indexer does (the tests compare the two).
   */
  bulkLoad?: boolean;
  /**
   * The exactness check run on the supplies read at the end (the indexer's, given by the CLI;
   * needs `node`): the marks to record. An export holds `Transfer` rows only, so a token whose
   * balances move by other events (WETH9's `Deposit`, Tether's `Issue`, a rebase) is found here.
   */
  checkExactness?: (supplies: readonly SupplyUpdate[], atBlock: number) => Promise<ExactnessUpdate[]>;
}

/** What an import did. */
export interface ImportSummary {
  chain: string;
  /** Transfer rows read from the inputs. */
  rowsRead: number;
  /** Transfers committed to the store. */
  imported: number;
  /** Rows at or below the store's checkpoint when the import started (already there). */
  skippedCommitted: number;
  /** Rows given twice with the same data (counted once). */
  duplicates: number;
  /** Rows of tokens whose Transfer logs are not ERC-20's (ERC-721): the API serves fungible transfers only. */
  nonFungibleRows: number;
  nonFungibleTokens: number;
  /** JSON-lines items of another `type` than `token_transfer` (blocks, logs, ...), ignored. */
  otherItems: number;
  /** Tokens the store did not know before. */
  newTokens: number;
  /** Blocks the committed batches covered, or null when nothing was committed. */
  fromBlock: number | null;
  toBlock: number | null;
  /** The store's checkpoint for the chain afterwards. */
  checkpoint: number | null;
  /** Wall time of the reading (and sorting) phase and of the writing phase. */
  readSeconds: number;
  writeSeconds: number;
  /** Bytes the sort file reached (0 with `sorted`). */
  stagingBytes: number;
  /** True when the signal stopped the import before the end. */
  interrupted: boolean;
  /** Tokens the exactness check marked not exact at the end (0 without a node or a check). */
  markedNotExact: number;
}

/** Imports the inputs; throws a `UserError` with one clear line for anything wrong with them. */
export async function importTransfers(options: ImportOptions): Promise<ImportSummary> {
  const { store, chain, node, signal } = options;
  const logger = options.logger.child({ component: 'import', chain });
  const finalityDepth = options.finalityDepth ?? 64;
  const batchTransfers = options.batchTransfers ?? 20_000;
  const concurrency = Math.max(1, options.concurrency ?? 2);
  const bulkLoad = options.bulkLoad !== false;
  const names = options.inputs.map(displayName);
  const where = (file: number, line: number) => `${names[file] ?? '?'}:${line}`;
  const rpcHint = `give --rpc ${chain}=<url>`;

  if (
    options.fromBlock !== undefined &&
    options.toBlock !== undefined &&
    options.toBlock < options.fromBlock
  ) {
    throw new UserError(`--to-block ${options.toBlock} is below --from-block ${options.fromBlock}`);
  }
  const startCheckpoint = await store.writer.getCheckpoint(chain);
  const nodeHeadCheck = (head: number | null) => {
    if (head !== null && options.toBlock !== undefined && options.toBlock > head) {
      throw new UserError(`--to-block ${options.toBlock} is above the node's head ${head}`);
    }
  };
  const floor = startCheckpoint?.block ?? null;
  const nodeHead = node === null ? null : await node.head();
  nodeHeadCheck(nodeHead);
  const headSeen = Math.max((await store.writer.getChainStatus(chain))?.head ?? 0, nodeHead ?? 0);
  const progress = createImportProgress({ logger, tty: options.tty ?? process.stderr.isTTY === true });

  const summary: ImportSummary = {
    chain,
    rowsRead: 0,
    imported: 0,
    skippedCommitted: 0,
    duplicates: 0,
    nonFungibleRows: 0,
    nonFungibleTokens: 0,
    otherItems: 0,
    newTokens: 0,
    fromBlock: null,
    toBlock: null,
    checkpoint: floor,
    readSeconds: 0,
    writeSeconds: 0,
    stagingBytes: 0,
    interrupted: false,
    markedNotExact: 0,
  };

  // ---- tokens: known to the store, or classified (and their metadata read) once per run ----
  const factsOf = createTokenLookup({ store, chain, node, where, rpcHint });
  /** Tokens seen while reading, checked against the store when there is no node to ask. */
  const seenTokens = new Set<string>();

  // ---- writing: batches of whole blocks, prepared ahead, committed in order ----
  const preparer = createBatchPreparer({
    chain,
    node,
    nodeHead,
    finalityDepth,
    head: headSeen,
    tokens: factsOf,
    logger,
    where,
  });

  let committedRows = 0;
  const committedTokens = new Set<string>();
  let commitChain: Promise<void> = Promise.resolve();
  let scheduledAny = false;
  const queue: Promise<void>[] = [];
  let totalToWrite: number | null = null;
  const sortedReadFraction = { value: null as number | null };

  /**
   * Starts preparing a batch and queues its commit after the previous one; waits while too many are
   * queued. Every batch but the `last` is a bulk load's (`IndexBatch.bulkLoad`): into a chain without
   * transfers the store appends it as it comes and builds everything else, sorted, with the last
   * batch (store/sqlite/bulk-load.ts, store/postgres/bulk-load.ts); otherwise SQLite defers its
   * balance rows and address entries (`deferBalances`) and writes them many batches at once.
   * Interrupted, the next run goes on from the checkpoint.
   */
  async function schedule(rows: ImportRow[], from: number, to: number, last: boolean): Promise<void> {
    const rowCount = rows.length;
    // Only the prepared batch is kept until its commit, not the rows it was made of.
    const prepared = preparer.prepare(rows, from, to);
    prepared.catch(() => {}); // awaited in the commit below
    // Only a store's very first batch continues no checkpoint (see IndexBatch.continues).
    const continues = floor === null && !scheduledAny ? null : from - 1;
    scheduledAny = true;
    const commit = commitChain.then(async () => {
      const p = await prepared;
      await store.writer.applyBatch({
        ...p.batch,
        continues,
        ...(last ? {} : { deferBalances: true, bulkLoad }),
      });
      summary.imported += p.batch.transfers.length;
      summary.nonFungibleRows += p.rows;
      for (const token of p.batch.tokens) {
        // A token's metadata goes with every batch prepared before its first one committed.
        if (!committedTokens.has(token.address)) {
          committedTokens.add(token.address);
          summary.newTokens++;
        }
      }
      summary.fromBlock ??= p.batch.fromBlock;
      summary.toBlock = p.batch.toBlock;
      committedRows += rowCount;
      progress.update({
        phase: 'writing',
        rows: committedRows,
        fraction:
          totalToWrite === null ? sortedReadFraction.value : committedRows / Math.max(totalToWrite, 1),
        block: p.batch.toBlock,
      });
    });
    commit.catch(() => {}); // rethrown where the queue is drained
    commitChain = commit;
    queue.push(commit);
    while (queue.length > concurrency) await queue.shift();
  }

  /** Cuts the chain-ordered rows into batches of whole blocks. */
  let nextFrom: number | null = floor === null ? null : floor + 1;
  let batchRows: ImportRow[] = [];
  async function push(row: ImportRow): Promise<void> {
    const last = batchRows[batchRows.length - 1];
    if (last !== undefined && batchRows.length >= batchTransfers && row.blockNumber !== last.blockNumber) {
      await flush(last.blockNumber, false);
    }
    batchRows.push(row);
  }
  async function flush(to: number, last: boolean): Promise<void> {
    const from = nextFrom ?? batchRows[0]?.blockNumber ?? to;
    const rows = batchRows;
    batchRows = [];
    nextFrom = to + 1;
    await schedule(rows, from, to, last);
  }

  /** Refuses to leave a hole between the stored checkpoint and the first imported block. */
  let started = false;
  function checkStart(firstBlock: number): void {
    started = true;
    const start = options.fromBlock ?? firstBlock;
    if (floor !== null && start > floor + 1) {
      throw new UserError(
        `the export starts at block ${start}, but ${chain} is indexed up to block ${floor} only: blocks ${floor + 1}-${start - 1} would be missing (if the export does cover them and they hold no transfers, say so with --from-block ${floor + 1})`,
      );
    }
    if (floor === null) nextFrom = start;
  }

  // ---- reading ----
  const checkRow = createRowCheck({
    node: node !== null,
    nodeHead,
    fromBlock: options.fromBlock,
    toBlock: options.toBlock,
    where,
    rpcHint,
  });
  let staging: Staging | null = null;
  const readStarted = Date.now();
  let minBlock = Number.POSITIVE_INFINITY;
  let previous: ImportRow | null = null;
  let totalBytes = 0;
  let bytesRead = 0;
  for (const path of options.inputs) {
    if (path === '-') continue;
    try {
      totalBytes += statSync(path).size;
    } catch {
      // reported when the file is opened
    }
  }
  const sorted = options.sorted === true;
  const readFraction = () => (totalBytes > 0 ? Math.min(bytesRead / totalBytes, 1) : null);

  try {
    if (!sorted) staging = createStaging({ dir: options.tmpDir, where });
    for (let fileIndex = 0; fileIndex < options.inputs.length; fileIndex++) {
      const path = options.inputs[fileIndex]!;
      const chunks = readExport({
        path,
        fileIndex,
        ...(options.format === undefined ? {} : { format: options.format }),
        onBytes: (n) => {
          bytesRead += n;
        },
        onOpen: ({ columns }) => {
          if (node === null && columns !== null) checkColumns(columns, names[fileIndex]!, rpcHint);
        },
      });
      for await (const chunk of chunks) {
        if (signal?.aborted) break;
        summary.otherItems += chunk.otherItems;
        const keep: ImportRow[] = [];
        const newTokens: ImportRow[] = [];
        for (const row of chunk.rows) {
          summary.rowsRead++;
          const b = row.blockNumber;
          checkRow(row);
          if (sorted) {
            if (previous !== null) {
              const order = b - previous.blockNumber || row.logIndex - previous.logIndex;
              if (order < 0) {
                throw new ImportInputError(
                  `${where(row.file, row.line)}: block ${b} log ${row.logIndex} comes after block ${previous.blockNumber} log ${previous.logIndex}: the input is not in chain order (leave out --sorted to have it sorted)`,
                );
              }
              if (order === 0) {
                if (!sameTransfer(previous, row)) {
                  throw new ImportInputError(
                    `${where(row.file, row.line)}: block ${b} log ${row.logIndex} was already given with different data at ${where(previous.file, previous.line)}`,
                  );
                }
                summary.duplicates++;
                continue;
              }
            } else checkStart(b);
            previous = row;
          }
          if (b < minBlock) minBlock = b;
          if (floor !== null && b <= floor) {
            summary.skippedCommitted++;
            continue;
          }
          if (node === null && !seenTokens.has(row.token)) {
            seenTokens.add(row.token);
            newTokens.push(row);
          }
          keep.push(row);
        }
        // Without a node every token must be in the store already: find out now, not at the end.
        if (newTokens.length > 0) await factsOf(newTokens);
        if (sorted) {
          sortedReadFraction.value = readFraction();
          for (const row of keep) await push(row);
        } else {
          summary.duplicates += staging!.add(keep);
          progress.update({ phase: 'reading', rows: summary.rowsRead, fraction: readFraction() });
        }
      }
      if (signal?.aborted) break;
    }
    summary.readSeconds = (Date.now() - readStarted) / 1000;

    const writeStarted = Date.now();
    if (!signal?.aborted) {
      if (!started && (Number.isFinite(minBlock) || options.fromBlock !== undefined)) checkStart(minBlock);
      if (staging !== null) {
        summary.stagingBytes = staging.bytes();
        totalToWrite = staging.count;
        if (staging.count > 0) {
          logger.info(
            { rows: staging.count, seconds: Number(summary.readSeconds.toFixed(1)) },
            'export read and sorted; writing to the store',
          );
        }
        for (const row of staging.sorted()) {
          await push(row);
          if (signal?.aborted) break;
        }
      }
      // The last batch, stretched to --to-block when the export covers blocks past its last row.
      let end = batchRows[batchRows.length - 1]?.blockNumber ?? (nextFrom === null ? null : nextFrom - 1);
      if (options.toBlock !== undefined && (end === null || options.toBlock > end)) end = options.toBlock;
      if (
        !signal?.aborted &&
        end !== null &&
        nextFrom !== null &&
        (batchRows.length > 0 || nextFrom <= end)
      ) {
        await flush(end, true);
      }
    }
    while (queue.length > 0) await queue.shift();
    summary.writeSeconds = (Date.now() - writeStarted) / 1000;
  } finally {
    progress.finish();
    // Let a failed run's in-flight commit end before the caller closes the store.
    await commitChain.catch(() => {});
    staging?.close();
  }
  summary.interrupted = signal?.aborted === true;
  summary.nonFungibleTokens = preparer.nonFungibleTokens();
  summary.checkpoint = (await store.writer.getCheckpoint(chain))?.block ?? null;
  // A store filled in one go plans its reads from statistics of when it was small (see there).
  if (summary.imported > 0) await store.writer.refreshStatistics();

  if (node !== null && summary.imported > 0 && !summary.interrupted)
    await refreshSupplies(summary.checkpoint);
  return summary;

  /** Reads the supplies of the tokens the import touched, as the indexer does after its batches. */
  async function refreshSupplies(checkpoint: number | null): Promise<void> {
    if (checkpoint === null || node === null) return;
    for (;;) {
      if (signal?.aborted) return;
      // Only tokens flagged by the batches (new, or a mint/burn): the rest is the indexer's periodic job.
      const addresses = await store.writer.tokensNeedingSupply(chain, -1, 200);
      if (addresses.length === 0) return;
      const read = await node.supplies(addresses, checkpoint);
      const supplies = read.map((s) => ({ ...s, atBlock: checkpoint }));
      await store.writer.updateSupplies(chain, supplies);
      await checkExactness(supplies, checkpoint);
    }
  }

  /**
   * Marks the tokens whose imported balances `balanceOf` contradicts. A failed check (a node
   * without that block's state) is a warning: the indexer checks the tokens at their next supply read.
   */
  async function checkExactness(supplies: readonly SupplyUpdate[], checkpoint: number): Promise<void> {
    if (options.checkExactness === undefined) return;
    try {
      const updates = await options.checkExactness(supplies, checkpoint);
      if (updates.length > 0) await store.writer.setExactness(chain, updates);
      summary.markedNotExact += updates.filter((u) => u.mark !== null).length;
    } catch (error) {
      logger.warn(
        { err: errorMessage(error) },
        'exactness check failed; the indexer checks these tokens at their next supply read',
      );
    }
  }
}
