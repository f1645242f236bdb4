/**
 * The import's batches: chain-ordered rows of whole blocks made into the `IndexBatch` the store
 * commits, with what the export lacks read from the node (block times, transaction positions, the
 * hashes of the blocks that may still reorg, new tokens' metadata) and the rows of tokens that are
 * not ERC-20s left out.
 */
import type { Logger } from '../internal/logger.js';
import type { BlockRef, IndexBatch, TokenMetadata, TransferRecord } from '../store/types.js';
import type { ImportRow } from './columns.js';
import { type BlockFacts, type ImportNode, NodeMismatchError } from './node-reader.js';
import type { TokenLookup } from './token-lookup.js';

/** A batch ready to commit. */
export interface PreparedBatch {
  batch: IndexBatch;
  /** Rows left out of it: their tokens are not ERC-20s. */
  rows: number;
}

export interface BatchPreparer {
  /** The batch of `rows` (chain-ordered, of whole blocks) covering blocks `from..to`. */
  prepare(rows: ImportRow[], from: number, to: number): Promise<PreparedBatch>;
  /** Tokens found not to be ERC-20s so far. */
  nonFungibleTokens(): number;
}

export function createBatchPreparer(options: {
  chain: string;
  node: ImportNode | null;
  /** The node's head when the import started; null without a node. */
  nodeHead: number | null;
  /** Blocks below the head that may still reorg; their hashes are recorded. */
  finalityDepth: number;
  /** The highest head seen so far (the store's and the node's); each batch raises it to its last block. */
  head: number;
  tokens: TokenLookup;
  logger: Logger;
  /** `file:line` of a row, for the errors. */
  where: (file: number, line: number) => string;
}): BatchPreparer {
  const { chain, node, nodeHead, finalityDepth, logger, where } = options;
  const factsOf = options.tokens;
  let headSeen = options.head;
  const nonFungible = new Set<string>();

  async function prepare(rows: ImportRow[], from: number, to: number): Promise<PreparedBatch> {
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

  return { prepare, nonFungibleTokens: () => nonFungible.size };
}
