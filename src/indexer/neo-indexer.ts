/**
 * The NEO (Legacy 2.x) indexer: NEP-5 transfers from application logs, global-asset transfers
 * from UTXO movements, contract deployments and asset registrations, block range by block
 * range. dBFT gives one-block finality, so there are no reorgs to follow: every range commits
 * once, together with its checkpoint, and a crash at any moment resumes from the checkpoint
 * with nothing lost and nothing counted twice.
 *
 * Pipeline: block ranges are fetched (`NeoSource.getBlocks`) a few at a time; each is then
 * prepared in order (inputs resolved, transfers derived, metadata of new tokens read) while
 * the previous one commits. Inputs are resolved from the outputs the in-flight commit creates,
 * then the store's output table, then the node (`resolveOutputs`, for outputs older than the
 * first indexed block).
 */

import { NeoApplicationLogMissingError } from '../chains/neo/errors.js';
import { fixed8ToAssetUnits } from '../chains/neo/fixed8.js';
import type { NeoBlock, NeoCreatedOutput, NeoOutputRef, NeoSource } from '../chains/neo/types.js';
import {
  deriveAssetTransfers,
  externalInputs,
  GAS_ASSET_ID,
  NEO_ASSET_ID,
  outputKey,
} from '../chains/neo/utxo.js';
import type { ChainConfig } from '../config/types.js';
import { type Settled, settle } from '../internal/async.js';
import { errorMessage, FatalIndexerError, TokenqueryError } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import type {
  IndexBatch,
  NeoAssetInfo,
  NeoBatchPart,
  StoreWriter,
  SupplyUpdate,
  TokenMetadata,
  TransferRecord,
} from '../store/types.js';
import { createChainStatusReport, runIndexerLoop } from './loop.js';
import { progressForCatchUp } from './progress.js';
import { createSupplyRefresh } from './supply-refresh.js';

export interface NeoIndexerOptions {
  chain: ChainConfig;
  source: NeoSource;
  store: StoreWriter;
  logger: Logger;
  signal: AbortSignal;
  /** Blocks per range: one `getBlocks` call, one commit. Default 100. */
  rangeBlocks?: number;
  /** Ranges fetched at once while catching up (each is itself fetched in parallel batches). Default 2. */
  concurrency?: number;
  /** Re-read every token's supply at least this often, in blocks. Default 1000. */
  supplyRefreshBlocks?: number;
  /** Draw a progress bar (TTY) instead of periodic log lines. Default: stderr is a TTY. */
  tty?: boolean;
}

export interface NeoIndexer {
  /** Indexes until `signal` aborts. Rejects only on a fatal error (the node serves another chain, or has no application logs). */
  run(): Promise<void>;
}

/** A range ready to commit. */
interface PreparedRange {
  batch: IndexBatch & { neo: NeoBatchPart };
  /** Outputs the range creates, keyed `txid:n`: what the next range may spend before this one has committed. */
  created: Map<string, NeoCreatedOutput>;
  lastHash: string;
  transferCount: number;
}

/** What the indexer knows of a global asset once it has read its state. */
interface AssetFacts {
  metadata: TokenMetadata;
  type: string;
}

/** Raised when a range does not follow the stored checkpoint: retried, then fatal. */
class DiscontinuityError extends TokenqueryError {
  override name = 'DiscontinuityError';
}

/** How many times a range may fail to follow the checkpoint before the indexer gives up. */
const MAX_DISCONTINUITIES = 3;

/** Creates the indexer; see {@link NeoIndexer}. */
export function createNeoIndexer(options: NeoIndexerOptions): NeoIndexer {
  const { chain, source, store, signal } = options;
  const name = chain.name;
  const logger = options.logger.child({ component: 'indexer', chain: name });
  const rangeBlocks = Math.max(1, options.rangeBlocks ?? 100);
  const concurrency = Math.max(1, options.concurrency ?? 2);

  /** Next block to index. */
  let next = chain.fromBlock;
  /** Whether the store holds a checkpoint of the chain (resumed from one, or committed since). */
  let hasCheckpoint = false;
  /** Hash of `next - 1` when known: the `previousHash` the next block must carry. */
  let tipHash: string | null = null;
  let discontinuities = 0;
  const status = createChainStatusReport(store, name);
  /** Tokens and assets the store has committed (their metadata need not be sent again). */
  const committed = new Set<string>();
  /** Metadata read from the node, kept until the token is committed (a failed commit is retried). */
  const nep5Metadata = new Map<string, TokenMetadata>();
  const assets = new Map<string, AssetFacts>();

  /** NEP-5: `totalSupply()`; assets: `available` and `amount` of the asset state. Node's current state. */
  const supply = createSupplyRefresh({
    chain: name,
    store,
    logger,
    signal,
    everyBlocks: options.supplyRefreshBlocks ?? 1000,
    read: readSupplies,
  });

  async function readSupplies(addresses: string[], atBlock: number): Promise<SupplyUpdate[]> {
    const updates: SupplyUpdate[] = [];
    const nep5 = addresses.filter((a) => a.length === 42);
    for (const metadata of await source.readNep5Metadata(nep5)) {
      updates.push({
        address: metadata.hash,
        totalSupply: metadata.totalSupply,
        cap: null,
        burnedBalance: null,
        atBlock,
      });
    }
    for (const id of addresses.filter((a) => a.length !== 42)) {
      const state = await source.getAssetState(id);
      const precision = state?.precision ?? 0;
      updates.push({
        address: id,
        totalSupply: state === null ? null : fixed8ToAssetUnits(state.available, precision),
        // An unlimited asset has no cap: its max supply is its total supply.
        cap: state === null || state.amount === null ? null : fixed8ToAssetUnits(state.amount, precision),
        burnedBalance: null,
        atBlock,
      });
    }
    return updates;
  }

  // ---- helpers ----
  /** True when the store already holds `address` as a token (remembered once seen). */
  async function isCommitted(address: string): Promise<boolean> {
    if (committed.has(address)) return true;
    if ((await store.getToken(name, address)) === null) return false;
    committed.add(address);
    return true;
  }

  /** Metadata of the NEP-5 tokens in `transfers` that the store does not hold yet, read once each. */
  async function newNep5Metadata(transfers: readonly TransferRecord[]): Promise<TokenMetadata[]> {
    const fresh: string[] = [];
    for (const token of new Set(transfers.map((t) => t.token))) {
      if (!(await isCommitted(token))) fresh.push(token);
    }
    const unread = fresh.filter((t) => !nep5Metadata.has(t));
    if (unread.length > 0) {
      for (const m of await source.readNep5Metadata(unread)) {
        nep5Metadata.set(m.hash, { address: m.hash, name: m.name, symbol: m.symbol, decimals: m.decimals });
      }
    }
    return fresh.map((t) => {
      const metadata = nep5Metadata.get(t);
      if (metadata === undefined) throw new TokenqueryError(`no NEP-5 metadata answer for ${t}`);
      return metadata;
    });
  }

  /**
   * Facts of every asset in `ids`: from memory, else the stored token row, else the node's
   * asset state. NEO and GAS are named `NEO` and `GAS`; other assets by their English name, for
   * both name and symbol (docs/api.md#neo-names).
   */
  async function assetFacts(ids: Iterable<string>): Promise<void> {
    for (const id of ids) {
      if (assets.has(id)) continue;
      const stored = await store.getNeoToken(name, id);
      if (stored !== null) {
        committed.add(id);
        const { address, name: assetName, symbol, decimals } = stored;
        assets.set(id, { metadata: { address, name: assetName, symbol, decimals }, type: stored.category });
        continue;
      }
      const state = await source.getAssetState(id);
      if (state === null) throw new TokenqueryError(`the node knows no asset ${id}, yet outputs of it exist`);
      const label = id === NEO_ASSET_ID ? 'NEO' : id === GAS_ASSET_ID ? 'GAS' : state.name;
      assets.set(id, {
        metadata: { address: id, name: label, symbol: label, decimals: state.precision },
        type: state.type,
      });
    }
  }

  /** Resolves the range's inputs that it does not create itself: in-flight commit, store, node. */
  async function resolveInputs(
    blocks: readonly NeoBlock[],
    pending: ReadonlyMap<string, NeoCreatedOutput>,
  ): Promise<Map<string, NeoCreatedOutput>> {
    const resolved = new Map<string, NeoCreatedOutput>();
    let missing: NeoOutputRef[] = [];
    for (const ref of externalInputs(blocks)) {
      const output = pending.get(outputKey(ref));
      if (output === undefined) missing.push(ref);
      else resolved.set(outputKey(ref), output);
    }
    if (missing.length > 0) {
      for (const row of await store.getNeoOutputs(name, missing)) resolved.set(outputKey(row), row);
      missing = missing.filter((ref) => !resolved.has(outputKey(ref)));
    }
    if (missing.length > 0) {
      for (const [key, output] of await source.resolveOutputs(missing)) resolved.set(key, output);
    }
    return resolved;
  }

  async function prepare(
    blocks: readonly NeoBlock[],
    pending: ReadonlyMap<string, NeoCreatedOutput>,
  ): Promise<PreparedRange> {
    const first = blocks[0]!;
    const last = blocks[blocks.length - 1]!;
    // One row per created output serves the batch, the lookups and the next range's pending map.
    const outputsCreated: NeoBatchPart['outputsCreated'] = [];
    const created = new Map<string, NeoCreatedOutput>();
    const assetIds = new Set<string>();
    for (const block of blocks) {
      for (const tx of block.transactions) {
        for (const output of tx.outputs) {
          const row = { ...output, txid: tx.txid, blockNumber: block.index };
          outputsCreated.push(row);
          created.set(outputKey(row), row);
          assetIds.add(output.asset);
        }
      }
    }
    const external = await resolveInputs(blocks, pending);
    const lookup = (ref: NeoOutputRef) => created.get(outputKey(ref)) ?? external.get(outputKey(ref));
    const outputsSpent: NeoBatchPart['outputsSpent'] = [];
    for (const block of blocks) {
      for (const tx of block.transactions) {
        for (const ref of tx.inputs) {
          const output = lookup(ref);
          if (output === undefined) {
            throw new TokenqueryError(`input ${ref.txid}:${ref.n} of ${tx.txid} was not resolved`);
          }
          const { txid, n, asset, address, value } = output;
          outputsSpent.push({ txid, n, asset, address, value, blockNumber: block.index });
          assetIds.add(asset);
        }
      }
    }
    await assetFacts(assetIds);
    const precisionOf = (asset: string): number => {
      const facts = assets.get(asset);
      if (facts === undefined) throw new TokenqueryError(`no precision known for asset ${asset}`);
      return facts.metadata.decimals;
    };

    const assetTransfers: TransferRecord[] = [];
    const nep5: TransferRecord[] = [];
    const assetInfo: NeoAssetInfo[] = [];
    const deployments: NeoBatchPart['deployments'] = [];
    for (const block of blocks) {
      for (const t of deriveAssetTransfers(block, lookup, precisionOf)) {
        const { kind: _kind, ...record } = t;
        assetTransfers.push(record);
      }
      for (const t of block.nep5Transfers) {
        nep5.push({
          token: t.token,
          blockNumber: t.blockNumber,
          logIndex: t.logIndex,
          txIndex: t.txIndex,
          txHash: t.txHash,
          from: t.from,
          to: t.to,
          value: t.value,
          time: t.time,
        });
      }
      for (const d of block.deployments) {
        deployments.push({
          hash: d.hash,
          blockNumber: d.blockNumber,
          txIndex: d.txIndex,
          txHash: d.txHash,
          time: d.time,
          kind: d.kind,
          name: d.name,
          author: d.author,
          ownerAddress: d.ownerAddress,
        });
      }
      for (const r of block.assetRegistrations) {
        assetInfo.push({
          asset: r.assetId,
          type: r.register?.type ?? null,
          registration: {
            blockNumber: r.blockNumber,
            time: r.time,
            // Genesis registrations have no witness; the admin named in the registration is
            // then the nearest thing to a registering address.
            registrar: r.registrarAddress ?? r.register?.admin ?? null,
          },
        });
      }
    }

    const tokens = await newNep5Metadata(nep5);
    for (const id of assetIds) {
      if (await isCommitted(id)) continue;
      const facts = assets.get(id)!;
      tokens.push(facts.metadata);
      assetInfo.push({ asset: id, type: facts.type, registration: null });
    }

    return {
      batch: {
        chain: name,
        fromBlock: first.index,
        toBlock: last.index,
        toBlockHash: last.hash,
        transfers: nep5,
        tokens,
        blocks: [],
        head: Math.max(status.headSeen, last.index),
        // No reorgs: nothing is kept for rollbacks.
        pruneBlocksBelow: last.index + 1,
        neo: { assetTransfers, outputsCreated, outputsSpent, deployments, assets: assetInfo },
      },
      created,
      lastHash: last.hash,
      transferCount: nep5.length + assetTransfers.length,
    };
  }

  async function commit(range: PreparedRange): Promise<void> {
    const { batch } = range;
    await store.applyBatch({
      ...batch,
      // Only the chain's very first batch continues no checkpoint (see IndexBatch.continues).
      continues: !hasCheckpoint && batch.fromBlock === chain.fromBlock ? null : batch.fromBlock - 1,
      head: Math.max(status.headSeen, batch.toBlock),
    });
    hasCheckpoint = true;
    for (const token of batch.tokens) {
      committed.add(token.address);
      nep5Metadata.delete(token.address);
    }
    next = batch.toBlock + 1;
    tipHash = range.lastHash;
    discontinuities = 0;
    const mints =
      batch.transfers.some((t) => t.from === '' || t.to === '') ||
      batch.neo.assetTransfers.some((t) => t.from === '');
    if (batch.tokens.length > 0 || mints) supply.kick();
  }

  /** Indexes `next..target`: ranges fetched `concurrency` at a time, prepared in order, each committing while the next is prepared. */
  async function catchUp(target: number): Promise<void> {
    const progress = progressForCatchUp({
      chain: name,
      logger,
      startBlock: next,
      targetBlock: target,
      ...(options.tty === undefined ? {} : { tty: options.tty }),
    });
    let transfersDone = 0;
    const inflight: { from: number; to: number; result: Promise<Settled<NeoBlock[]>> }[] = [];
    let cursor = next;
    /** Hash the next fetched range must continue from (the last prepared range's last block). */
    let expectedParent = tipHash;
    let committing: Promise<Settled<void>> | null = null;
    let pending: ReadonlyMap<string, NeoCreatedOutput> = new Map();

    const awaitCommit = async (): Promise<void> => {
      if (committing === null) return;
      const outcome = await committing;
      committing = null;
      if (!outcome.ok) throw outcome.error;
    };

    try {
      while (!signal.aborted) {
        while (inflight.length < concurrency && cursor <= target) {
          const to = Math.min(cursor + rangeBlocks - 1, target);
          inflight.push({ from: cursor, to, result: settle(source.getBlocks(cursor, to)) });
          cursor = to + 1;
        }
        const head = inflight.shift();
        if (head === undefined) break;
        const fetched = await head.result;
        if (!fetched.ok) throw fetched.error;
        const blocks = fetched.value;
        if (signal.aborted) break;
        const first = blocks[0];
        if (first === undefined || first.index !== head.from || blocks.length !== head.to - head.from + 1) {
          throw new TokenqueryError(`getBlocks ${head.from}..${head.to} answered another range`);
        }
        // getBlocks checks the links inside the range; the first link is checked here.
        if (expectedParent !== null && first.previousHash !== expectedParent) {
          throw new DiscontinuityError(
            `block ${first.index} names ${first.previousHash} as its parent, but the indexed block ${first.index - 1} is ${expectedParent}`,
          );
        }
        const prepared = await prepare(blocks, pending);
        await awaitCommit();
        pending = prepared.created;
        expectedParent = prepared.lastHash;
        committing = settle(
          commit(prepared).then(() => {
            transfersDone += prepared.transferCount;
            progress?.update({ block: prepared.batch.toBlock, transfers: transfersDone });
          }),
        );
      }
      await awaitCommit();
    } finally {
      // Never leave a commit running behind the caller's back: the next step starts from its checkpoint.
      if (committing !== null) {
        const outcome: Settled<void> = await committing;
        if (!outcome.ok && !signal.aborted)
          logger.debug({ err: errorMessage(outcome.error) }, 'commit failed');
      }
      progress?.finish();
    }
  }

  async function step(): Promise<'busy' | 'idle'> {
    const head = (await source.getBlockCount()) - 1;
    status.seen(head);
    await status.writeHead();
    if (next <= head) {
      await catchUp(head);
      return 'busy';
    }
    supply.kickIfDue();
    return 'idle';
  }

  return {
    run: () =>
      runIndexerLoop({
        chain,
        store,
        logger,
        signal,
        status,
        supply,
        steps: {
          async resume(checkpoint) {
            if (checkpoint) {
              next = checkpoint.block + 1;
              tipHash = checkpoint.hash;
              hasCheckpoint = true;
            }
            // Fails at once on a store without NEO support, before anything is written.
            await store.getNeoToken(name, NEO_ASSET_ID);
          },
          next: () => next,
          step,
          asFatal,
        },
      }),
  };

  /** The errors retrying cannot cure, as FatalIndexerError; null for the others. */
  function asFatal(error: unknown): FatalIndexerError | null {
    if (error instanceof FatalIndexerError) return error;
    if (error instanceof NeoApplicationLogMissingError) return new FatalIndexerError(error.shortMessage);
    if (error instanceof DiscontinuityError && ++discontinuities >= MAX_DISCONTINUITIES) {
      return new FatalIndexerError(
        `${error.shortMessage}: the node serves another chain than the one this store indexed (NEO has no reorgs); use the right node or a new --db`,
      );
    }
    return null;
  }
}
