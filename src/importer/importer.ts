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
 * rows at or below the checkpoint are skipped. Block times, transaction positions and token
 * metadata the export lacks are read from the node, for the next batches while one commits.
 */
import { statSync } from 'node:fs';
import { UserError } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import type { BlockRef, IndexBatch, Store, TokenMetadata, TransferRecord } from '../store/types.js';
import { ImportInputError, type ImportRow } from './columns.js';
import { displayName, type InputFormat, readExport } from './input.js';
import { type BlockFacts, type ImportNode, NodeMismatchError, type TokenFacts } from './node-reader.js';
import { createImportProgress } from './progress.js';
import { createStaging, type Staging, sameTransfer } from './staging.js';

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
}

/** Imports the inputs; throws a `UserError` with one clear line for anything wrong with them. */
export async function importTransfers(options: ImportOptions): Promise<ImportSummary> {
  const { store, chain, node, signal } = options;
  const logger = options.logger.child({ component: 'import', chain });
  const finalityDepth = options.finalityDepth ?? 64;
  const batchTransfers = options.batchTransfers ?? 20_000;
  const concurrency = Math.max(1, options.concurrency ?? 2);
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
  let headSeen = Math.max((await store.writer.getChainStatus(chain))?.head ?? 0, nodeHead ?? 0);
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
  };

  // ---- tokens: known to the store, or classified (and their metadata read) once per run ----
  const nonFungible = new Set<string>();
  const tokenFacts = new Map<string, Promise<TokenFacts | 'known'>>();
  /** Tokens seen while reading, checked against the store when there is no node to ask. */
  const seenTokens = new Set<string>();

  function factsOf(samples: ImportRow[]): Promise<(TokenFacts | 'known')[]> {
    const fresh = samples.filter((s) => !tokenFacts.has(s.token));
    if (fresh.length > 0) {
      const all = (async () => {
        const unknown: ImportRow[] = [];
        const known = new Set<string>();
        for (const s of fresh) {
          if (await store.writer.getToken(chain, s.token)) known.add(s.token);
          else unknown.push(s);
        }
        if (unknown.length > 0 && node === null) {
          const first = unknown[0]!;
          throw new ImportInputError(
            `${where(first.file, first.line)}: token ${first.token} is new to the store: its name, symbol and decimals come from a node; ${rpcHint}`,
          );
        }
        const facts =
          node === null
            ? []
            : await node.tokens(
                unknown.map((s) => ({
                  token: s.token,
                  blockNumber: s.blockNumber,
                  logIndex: s.logIndex,
                  txHash: s.txHash,
                  where: where(s.file, s.line),
                })),
              );
        const byToken = new Map<string, TokenFacts | 'known'>();
        for (const token of known) byToken.set(token, 'known');
        unknown.forEach((s, i) => {
          byToken.set(s.token, facts[i] ?? null);
        });
        return byToken;
      })();
      for (const s of fresh) {
        const one = all.then((map) => map.get(s.token)!);
        one.catch(() => {}); // the error reaches the caller through Promise.all below
        tokenFacts.set(s.token, one);
      }
    }
    return Promise.all(samples.map((s) => tokenFacts.get(s.token)!));
  }

  // ---- writing: batches of whole blocks, prepared ahead, committed in order ----
  interface Prepared {
    batch: IndexBatch;
    rows: number;
  }

  async function prepare(rows: ImportRow[], from: number, to: number): Promise<Prepared> {
    const needTx = new Set<number>();
    const needTime = new Set<number>();
    for (const r of rows) {
      if (r.txIndex === null) needTx.add(r.blockNumber);
      else if (r.time === null) needTime.add(r.blockNumber);
    }
    for (const b of needTx) needTime.delete(b);
    // Blocks inside the unfinalized window get block refs, so that the indexer can detect a reorg
    // of imported blocks; only then is the block list of the batch not empty.
    const windowFrom =
      nodeHead === null ? Number.POSITIVE_INFINITY : Math.max(from, nodeHead - finalityDepth + 1);
    const windowBlocks: number[] = [];
    for (let b = windowFrom; b <= to; b++) if (!needTx.has(b)) windowBlocks.push(b);
    for (const b of windowBlocks) needTime.delete(b);

    // First row of every token, for the ones that need a look at the node.
    const firstRows = new Map<string, ImportRow>();
    for (const r of rows) if (!firstRows.has(r.token)) firstRows.set(r.token, r);
    const samples = [...firstRows.values()];

    const [withTx, times, window, facts] = await Promise.all([
      node === null ? new Map<number, BlockFacts>() : node.blocks([...needTx], true),
      node === null ? new Map<number, BlockFacts>() : node.blocks([...needTime], false),
      node === null ? new Map<number, BlockFacts>() : node.blocks(windowBlocks, false),
      factsOf(samples),
    ]);
    const block = (n: number) => withTx.get(n) ?? window.get(n) ?? times.get(n);

    const metadata: TokenMetadata[] = [];
    const skip = new Set<string>();
    samples.forEach((s, i) => {
      const f = facts[i]!;
      if (f === 'known') return;
      if (f === null) {
        skip.add(s.token);
        if (!nonFungible.has(s.token)) {
          nonFungible.add(s.token);
          logger.debug({ token: s.token }, 'not an ERC-20 (its Transfer logs carry no amount): rows skipped');
        }
      } else metadata.push(f);
    });

    const transfers: TransferRecord[] = [];
    let skippedRows = 0;
    for (const r of rows) {
      if (skip.has(r.token)) {
        skippedRows++;
        continue;
      }
      const facts =
        r.time === null || r.txIndex === null || r.blockHash !== null ? block(r.blockNumber) : undefined;
      if (facts !== undefined && r.blockHash !== null && facts.hash !== r.blockHash) {
        throw new NodeMismatchError(
          `${where(r.file, r.line)}: block ${r.blockNumber} has hash ${facts.hash} on the node but ${r.blockHash} in the export: is the node on the same chain?`,
        );
      }
      let txIndex = r.txIndex;
      if (txIndex === null) {
        txIndex = facts?.txIndex?.get(r.txHash) ?? null;
        if (txIndex === null) {
          throw new NodeMismatchError(
            `${where(r.file, r.line)}: transaction ${r.txHash} is not in block ${r.blockNumber} on the node: is it on the same chain as the export?`,
          );
        }
      }
      const time = r.time ?? facts?.timestamp;
      if (time === undefined) throw new Error(`no time for block ${r.blockNumber}`); // fetched above
      transfers.push({
        token: r.token,
        blockNumber: r.blockNumber,
        logIndex: r.logIndex,
        txIndex,
        txHash: r.txHash,
        from: r.from,
        to: r.to,
        value: BigInt(r.value),
        time,
      });
    }
    const refs: BlockRef[] = windowBlocks.flatMap((n) => {
      const b = block(n);
      return b === undefined ? [] : [{ number: b.number, hash: b.hash, parentHash: b.parentHash }];
    });
    for (const n of needTx) {
      if (n >= windowFrom) {
        const b = withTx.get(n)!;
        refs.push({ number: b.number, hash: b.hash, parentHash: b.parentHash });
      }
    }
    const last = rows[rows.length - 1];
    const toBlockHash = block(to)?.hash ?? (last?.blockNumber === to ? last.blockHash : null);
    headSeen = Math.max(headSeen, to);
    return {
      rows: skippedRows,
      batch: {
        chain,
        fromBlock: from,
        toBlock: to,
        toBlockHash,
        transfers,
        tokens: metadata,
        blocks: refs,
        head: headSeen,
        pruneBlocksBelow: headSeen - finalityDepth,
      },
    };
  }

  let committedRows = 0;
  const committedTokens = new Set<string>();
  let commitChain: Promise<void> = Promise.resolve();
  const queue: Promise<void>[] = [];
  let totalToWrite: number | null = null;
  const sortedReadFraction = { value: null as number | null };

  /** Starts preparing a batch and queues its commit after the previous one; waits while too many are queued. */
  async function schedule(rows: ImportRow[], from: number, to: number): Promise<void> {
    const rowCount = rows.length;
    // Only the prepared batch is kept until its commit, not the rows it was made of.
    const prepared = prepare(rows, from, to);
    prepared.catch(() => {}); // awaited in the commit below
    const commit = commitChain.then(async () => {
      const p = await prepared;
      await store.writer.applyBatch(p.batch);
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
      await flush(last.blockNumber);
    }
    batchRows.push(row);
  }
  async function flush(to: number): Promise<void> {
    const from = nextFrom ?? batchRows[0]?.blockNumber ?? to;
    const rows = batchRows;
    batchRows = [];
    nextFrom = to + 1;
    await schedule(rows, from, to);
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
          if (node !== null || columns === null) return;
          for (const [column, what] of [
            ['block_timestamp', 'block times'],
            ['transaction_index', 'transaction positions'],
          ] as const) {
            if (!columns.has(column)) {
              throw new ImportInputError(
                `${names[fileIndex]}: the export has no ${column} column: ${what} come from a node; ${rpcHint}`,
              );
            }
          }
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
          if (node === null && (row.time === null || row.txIndex === null)) {
            const [column, what] =
              row.time === null
                ? ['block_timestamp', 'block times']
                : ['transaction_index', 'transaction positions'];
            throw new ImportInputError(
              `${where(row.file, row.line)}: column ${column} is missing: ${what} come from a node; ${rpcHint}`,
            );
          }
          if (options.fromBlock !== undefined && b < options.fromBlock) {
            throw new ImportInputError(
              `${where(row.file, row.line)}: block ${b} is below --from-block ${options.fromBlock}`,
            );
          }
          if (options.toBlock !== undefined && b > options.toBlock) {
            throw new ImportInputError(
              `${where(row.file, row.line)}: block ${b} is above --to-block ${options.toBlock}`,
            );
          }
          if (nodeHead !== null && b > nodeHead) {
            throw new NodeMismatchError(
              `${where(row.file, row.line)}: block ${b} is above the node's head ${nodeHead}: is the node synced, and on the same chain?`,
            );
          }
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
        await flush(end);
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
  summary.nonFungibleTokens = nonFungible.size;
  summary.checkpoint = (await store.writer.getCheckpoint(chain))?.block ?? null;

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
      const supplies = await node.supplies(addresses, checkpoint);
      await store.writer.updateSupplies(
        chain,
        supplies.map((s) => ({ ...s, atBlock: checkpoint })),
      );
    }
  }
}
