/**
 * The EVM indexer for one chain: backfill with pipelined, adaptive `eth_getLogs` (evm-backfill.ts),
 * then follow the head block by block inside the unfinalized window, detecting reorgs by parent
 * hash and rolling back exactly (evm-realtime.ts). Every batch commits together with its
 * checkpoint, so a crash at any moment resumes with nothing lost and nothing counted twice. The
 * run loop (resume, retry, status) is loop.ts's, shared with the NEO indexer.
 */

import type { EvmSource } from '../chains/evm/types.js';
import type { ChainConfig } from '../config/types.js';
import { DEAD_ADDRESS, ZERO_ADDRESS } from '../internal/chains.js';
import { TokenqueryError } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import type {
  BalanceChange,
  BatchSeeds,
  Checkpoint,
  StoreWriter,
  TokenMetadata,
  TransferRecord,
} from '../store/types.js';
import { createBalanceEvents } from './balance-events.js';
import { createEvmBackfill, type EvmBackfillTuning } from './evm-backfill.js';
import {
  createRefusals,
  type EvmCommit,
  type EvmPosition,
  type EvmTokensAndSeeds,
  InconsistentChainError,
} from './evm-batch.js';
import { createEvmRealtime, type EvmRealtimeTuning } from './evm-realtime.js';
import { createExactnessCheck } from './exactness-check.js';
import { createHolderSeeder, type HolderSeeder } from './holder-seeds.js';
import { createChainStatusReport, runIndexerLoop } from './loop.js';
import { createReconcile } from './reconcile.js';
import { createSupplyRefresh } from './supply-refresh.js';

export interface EvmIndexerOptions extends EvmBackfillTuning, EvmRealtimeTuning {
  chain: ChainConfig;
  source: EvmSource;
  store: StoreWriter;
  logger: Logger;
  signal: AbortSignal;
  /** Re-read every token's supply at least this often, in blocks. Default 1000. */
  supplyRefreshBlocks?: number;
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

/** Wires the backfill, the head-following and the shared run loop; see {@link EvmIndexer}. */
export function createEvmIndexer(options: EvmIndexerOptions): EvmIndexer {
  const { chain, source, store, signal } = options;
  const name = chain.name;
  const logger = options.logger.child({ component: 'indexer', chain: name });
  const position: EvmPosition = { next: chain.fromBlock, tipHash: null, hasCheckpoint: false };
  const status = createChainStatusReport(store, name);
  const refusals = createRefusals();
  const knownTokens = new Set<string>();
  const metadataInFlight = new Map<string, Promise<TokenMetadata>>();
  /** Set up at start from the store (a restart seeds at the block the first run chose). */
  let seeder: HolderSeeder | null = null;
  /** The checkpoint the run resumed from (null: a first run). */
  let resumedFrom: Checkpoint | null = null;

  /** Supplies of `addresses` read at `atBlock`, recorded as read there. */
  const readSuppliesAt = async (addresses: string[], atBlock: number) =>
    (await source.readSupplies(addresses, atBlock)).map((s) => ({ ...s, atBlock }));
  // Held while a rollback runs: no supply read may start or be recorded then (see evm-realtime.ts).
  // Reconcile mode (`--reconcile`): touched holders of tokens that move balances silently are read on the node.
  const reconcile =
    chain.reconcile === true
      ? createReconcile({ chain: name, store, source, logger, finalityDepth: chain.finalityDepth })
      : undefined;
  const supply = createSupplyRefresh({
    chain: name,
    store,
    logger,
    signal,
    everyBlocks: options.supplyRefreshBlocks ?? 1000,
    read: readSuppliesAt,
    exactness: createExactnessCheck({
      chain: name,
      store,
      readSupplies: readSuppliesAt,
      readBalances: (token, holders, block) => source.readBalances(token, holders, block),
    }),
    ...(reconcile === undefined ? {} : { reconcile }),
  });

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

  /** Whether the store knows `token` (remembered once it does). */
  async function isStoredToken(token: string): Promise<boolean> {
    if (knownTokens.has(token)) return true;
    if ((await store.getToken(name, token)) === null) return false;
    knownTokens.add(token);
    return true;
  }

  /** Metadata of the tokens in `transfers` and `changes` (each in chain order) that the store does not know yet. */
  async function newTokenMetadata(
    transfers: readonly TransferRecord[],
    changes: readonly BalanceChange[],
  ): Promise<TokenMetadata[]> {
    const unknown: string[] = [];
    const seen = new Set<string>();
    for (const list of [transfers, changes]) {
      for (const t of list) {
        if (knownTokens.has(t.token) || seen.has(t.token)) continue;
        seen.add(t.token);
        if (!(await isStoredToken(t.token))) unknown.push(t.token);
      }
    }
    if (unknown.length === 0) return [];
    // Read at the batch's newest block, where every one of these tokens exists, not at `latest`:
    // a node behind a load balancer may not have a brand-new token yet (and then errs instead).
    const newest = Math.max(transfers.at(-1)?.blockNumber ?? 0, changes.at(-1)?.blockNumber ?? 0);
    return metadataOf(unknown, newest);
  }

  /** Balance changes name their holder as both parties, for the seeder. */
  const asParties = (changes: readonly BalanceChange[]) =>
    changes.map((c) => ({ token: c.token, from: c.holder, to: c.holder }));

  function seedsFor(transfers: TransferRecord[], changes: BalanceChange[]): Promise<BatchSeeds | undefined> {
    if (seeder === null) return Promise.resolve(undefined);
    return seeder.seedsFor(changes.length === 0 ? transfers : [...transfers, ...asParties(changes)]);
  }

  const balanceEvents = createBalanceEvents({ source, logger, isStoredToken, knownTokens });

  const tokensAndSeeds: EvmTokensAndSeeds = async (transfers, events) => {
    const changes = await balanceEvents.changesOf(transfers, events);
    const [tokens, seeds] = await Promise.all([
      newTokenMetadata(transfers, changes),
      seedsFor(transfers, changes),
    ]);
    return { changes, tokens, seeds };
  };

  const commit: EvmCommit = async (range, extra) => {
    const head = status.headSeen;
    await store.applyBatch({
      chain: name,
      fromBlock: range.from,
      // Only the chain's very first batch continues no checkpoint: a batch pipelined behind one
      // that failed is then refused by the store, checkpoint or not (see IndexBatch.continues).
      continues: !position.hasCheckpoint && range.from === chain.fromBlock ? null : range.from - 1,
      toBlock: range.to,
      toBlockHash: extra.toBlockHash,
      transfers: range.transfers,
      ...(range.changes.length === 0 ? {} : { balanceChanges: range.changes }),
      tokens: range.tokens,
      blocks: extra.blocks.map(({ number, hash, parentHash }) => ({ number, hash, parentHash })),
      head,
      pruneBlocksBelow: head - chain.finalityDepth,
      ...(range.seeds === undefined ? {} : { seeds: range.seeds }),
      ...(extra.deferBalances === true ? { deferBalances: true } : {}),
    });
    status.headWritten(head);
    for (const token of range.tokens) {
      knownTokens.add(token.address);
      metadataInFlight.delete(token.address);
    }
    seeder?.committed(range.seeds);
    position.next = range.to + 1;
    position.tipHash = extra.toBlockHash;
    position.hasCheckpoint = true;
    if (status.lastError !== null) await status.recordError(null); // progress: a fault reported mid-step is over
    refusals.committed(range.to);
    // A balance change mints or burns (its token's total supply moves).
    const reconciling = reconcile?.committed(range.transfers, range.changes, { to: range.to, head }) === true;
    if (reconciling || range.tokens.length > 0 || range.changes.length > 0 || touchesSupply(range.transfers))
      supply.kick();
  };

  const parts = { source, store, logger, signal, position, commit, tokensAndSeeds, refusals };
  const { backfill } = createEvmBackfill({ ...options, ...parts, chain: name });
  const realtime = createEvmRealtime({
    ...options,
    ...parts,
    supply,
    forgetTokens: (tokens) => {
      for (const token of tokens) knownTokens.delete(token);
      // Called after every rollback: it took off any correction above the ancestor.
      reconcile?.rolledBack();
    },
  });

  async function step(): Promise<'busy' | 'idle'> {
    const head = await source.blockNumber();
    realtime.polled(head);
    status.seen(head);
    // Periodic refresh (busy or idle: a chain that never idles must still get it): tokens whose
    // supply was read more than `supplyRefreshBlocks` ago, and any mark a failed read left.
    supply.kickIfDue();
    const finalized = status.headSeen - chain.finalityDepth;
    if (position.next <= finalized) {
      await status.writeHead();
      // The tip may be inside the window (the indexer fell behind while following): a reorg below
      // it must be handled before blocks are stacked on it without their parents being checked.
      const tip = position.next;
      await realtime.checkTip(head);
      if (position.next !== tip) return 'busy';
      await backfill(finalized);
      return 'busy';
    }
    if (position.next <= head) {
      // The block's batch records the head too: a write of its own first would only delay the
      // block on its way to the API. Written here when no batch was (a reorg was handled instead).
      await realtime.follow(head);
      await status.writeHead();
      return 'busy';
    }
    await status.writeHead();
    await realtime.checkTip(head);
    return 'idle';
  }

  return {
    reportRetriedFault(message) {
      status.recordError(`${message} (retrying)`).catch(() => {});
    },
    run: () =>
      runIndexerLoop({
        chain,
        store,
        logger,
        signal,
        status,
        supply,
        steps: {
          resume(checkpoint) {
            resumedFrom = checkpoint;
            if (checkpoint) {
              position.next = checkpoint.block + 1;
              position.tipHash = checkpoint.hash;
              position.hasCheckpoint = true;
            }
          },
          started(stored) {
            // A chain that starts late seeds each new holder with its balance before the start; once it
            // has a checkpoint, the store says at which block (or that it is not seeded at all).
            const seedBlock = resumedFrom
              ? (stored?.seedBlock ?? null)
              : chain.fromBlock > 0
                ? chain.fromBlock - 1
                : null;
            if (stored?.holdersPartial === true) {
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
              partial: stored?.holdersPartial === true,
            });
          },
          startFields: { finalityDepth: chain.finalityDepth },
          next: () => position.next,
          step,
          idle: realtime.waitForHead,
          retryDelay: (error) => (error instanceof InconsistentChainError ? 100 : undefined),
        },
      }),
  };
}

const BURN_ADDRESSES = new Set([ZERO_ADDRESS, DEAD_ADDRESS]);

/** Mints, burns and moves to/from burn addresses change total or circulating supply. */
function touchesSupply(transfers: TransferRecord[]): boolean {
  return transfers.some((t) => BURN_ADDRESSES.has(t.from) || BURN_ADDRESSES.has(t.to));
}
