/**
 * Reconcile mode (issue #18; `--reconcile`, config key `reconcile`; docs/reliability.md,
 * "Reconcile mode"): for tokens whose `balanceOf` moves without a log per holder, the stored
 * balances of the addresses their logs name are set to `balanceOf` on the node, so that touched
 * holders are exact. Each round reads, at the checkpoint C, `balanceOf` of
 * - every address a followed token's logs have ever named (its stored balance rows), page by page,
 *   once when the token is taken up (the exactness check marked it, or a probe found it off);
 * - then the addresses its new logs named since the last round, and its largest holders: one of
 *   those that differs though no new log named it shows a silent change (a rebase) and the token
 *   is read in full again;
 * - for the tokens it does not follow, one transfer's parties (a probe), so that a token the sum
 *   check cannot see (a reflection token, whose logs keep its sum) is found and taken up;
 * through Multicall3's `aggregate3` where it has code at C (JSON-RPC batches of `eth_call`
 * otherwise), and writes each difference (node minus stored) as a balance change at C, in one
 * batch that adds no block and continues C (store/types.ts, `IndexBatch.toBlock`).
 *
 * Why that is never applied twice: the difference is taken against the stored balance at C, and
 * the store refuses the batch unless its checkpoint is still C, so nothing changed the stored side
 * in between (rollbacks wait for the round: it runs inside the supply refresh, which a rollback
 * holds). A batch refused (a block committed meanwhile) or a crash before it commits leaves the
 * stored side as it was, and the work is done again at a later checkpoint. A rollback below C takes
 * the corrections off with the blocks (they are journaled at C), so every followed token is read in
 * full again. What is followed is held in memory: after a restart a token is taken up again when
 * the check marks it or a probe finds it off.
 */
import { MULTICALL3_ADDRESS } from '../chains/evm/abi.js';
import { MULTICALL_CHUNK } from '../chains/evm/state-reads.js';
import type { EvmSource, HolderRef } from '../chains/evm/types.js';
import { TokenqueryError } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import { NON_HOLDERS } from '../store/batch-plan.js';
import type { BalanceChange, StoreWriter, TransferRecord } from '../store/types.js';

/**
 * Corrections take log indexes from here up at their block, far above any real log's, so they
 * never meet a log's key (token, block, log index); below int4's maximum (PostgreSQL's column).
 */
export const RECONCILE_LOG_INDEX_BASE = 2_000_000_000;
/** Stored holdings read per followed token and round while it is read in full. */
const FULL_PAGE = 2_000;
/** Largest holders of a followed token read each round, to see silent changes. */
const SAMPLE = 3;
/** Tokens probed at most (a bound on memory while logs name many tokens between rounds). */
const MAX_PROBED = 10_000;
/** How long a chain without Multicall3 code is believed to have none. */
const MULTICALL_RECHECK_MS = 60_000;

export interface ReconcileOptions {
  chain: string;
  store: Pick<
    StoreWriter,
    | 'getCheckpoint'
    | 'getChainStatus'
    | 'getToken'
    | 'getBalance'
    | 'scanHoldings'
    | 'scanBalanceChanges'
    | 'listHolders'
    | 'applyBatch'
  >;
  source: Pick<EvmSource, 'readBalancesAt' | 'hasCode'>;
  logger: Logger;
  /**
   * The chain's unfinalized window: while the checkpoint is further than this below the head, the
   * index is backfilling, and rounds wait (their batches would mostly be refused) and nothing is probed.
   */
  finalityDepth: number;
  /** Stored holdings read per token and round in a full read (tests). Default 2,000. */
  fullPage?: number;
}

/** What reconciling has cost and done so far (docs/benchmarks.md). */
export interface ReconcileStats {
  rounds: number;
  /** `balanceOf` pairs read. */
  pairs: number;
  /** JSON-RPC calls made: one per `aggregate3` of up to `MULTICALL_CHUNK` pairs, one per `eth_call` without it, and `eth_getCode`. */
  nodeCalls: number;
  /** Balance changes written. */
  corrections: number;
  /** Rounds whose batch the store refused because a block committed meanwhile. */
  refused: number;
}

export interface Reconcile {
  /** Takes up `tokens` (the exactness check has just marked them): each is read in full. */
  adopt(tokens: readonly string[]): void;
  /**
   * A batch committed these logs: their addresses are read at the next round (followed tokens),
   * or probed (the others). True when a round is wanted.
   */
  committed(
    transfers: readonly TransferRecord[],
    changes: readonly BalanceChange[],
    range: { to: number; head: number },
  ): boolean;
  /** A rollback took corrections off: every followed token is read in full again. */
  rolledBack(): void;
  /**
   * One round at the checkpoint. True when it wrote corrections or left work for another round
   * (their tokens' supplies are to be read again, and the round run again).
   */
  round(): Promise<boolean>;
  readonly stats: Readonly<ReconcileStats>;
}

interface Followed {
  /** Addresses new logs named since the last round. */
  pending: Set<string>;
  /** Reading in full: the last holding read (null: from the start); undefined: not reading in full. */
  cursor: string | null | undefined;
}

/** One pair of a round: what it is read for, and the stored balance it is compared with. */
interface Read extends HolderRef {
  stored: bigint;
  /** A followed token's holder no new log named (a sampled holder): a difference is a silent change. */
  sampled: boolean;
  probe: boolean;
}

export function createReconcile(options: ReconcileOptions): Reconcile {
  const { chain, store, source, logger } = options;
  const fullPage = options.fullPage ?? FULL_PAGE;
  const followed = new Map<string, Followed>();
  const probes = new Map<string, Set<string>>();
  const stats: ReconcileStats = { rounds: 0, pairs: 0, nodeCalls: 0, corrections: 0, refused: 0 };
  let multicall: { has: boolean; at: number } | null = null;

  function follow(token: string): Followed {
    let entry = followed.get(token);
    if (entry === undefined) {
      entry = { pending: new Set(), cursor: null };
      followed.set(token, entry);
      probes.delete(token);
    }
    return entry;
  }

  function name(token: string, holder: string, probing: boolean): boolean {
    if (NON_HOLDERS.has(holder)) return false;
    const entry = followed.get(token);
    if (entry !== undefined) {
      entry.pending.add(holder);
      return true;
    }
    if (!probing) return false;
    let probe = probes.get(token);
    if (probe === undefined) {
      if (probes.size >= MAX_PROBED) return false;
      probe = new Set();
      probes.set(token, probe);
    }
    // One transfer's parties are enough to see a token off; the newest say most.
    if (probe.size >= 2) probe.clear();
    probe.add(holder);
    return true;
  }

  async function hasMulticall(block: number): Promise<boolean> {
    if (multicall?.has === true) return true;
    if (multicall !== null && Date.now() - multicall.at < MULTICALL_RECHECK_MS) return false;
    stats.nodeCalls++;
    const [has] = await source.hasCode([MULTICALL3_ADDRESS], block);
    multicall = { has: has === true, at: Date.now() };
    logger.info({ block, multicall: multicall.has }, 'reconcile: balanceOf reads through Multicall3');
    return multicall.has;
  }

  /** The pairs of a round, with their stored balances; the full reads' next cursors. */
  async function plan(
    taken: ReadonlyMap<string, Set<string>>,
    probed: ReadonlyMap<string, Set<string>>,
  ): Promise<{ reads: Read[]; cursors: Map<string, string | null | undefined> }> {
    const reads: Read[] = [];
    const cursors = new Map<string, string | null | undefined>();
    const seen = new Set<string>();
    const add = async (read: Omit<Read, 'stored'>, stored?: bigint) => {
      const key = `${read.token}:${read.holder}`;
      if (seen.has(key)) return;
      seen.add(key);
      reads.push({ ...read, stored: stored ?? (await store.getBalance(chain, read.token, read.holder)) });
    };
    for (const [token, entry] of [...followed]) {
      // A rollback may have removed the token (its first transfers were in the dropped blocks).
      if ((await store.getToken(chain, token)) === null) {
        followed.delete(token);
        continue;
      }
      const pending = taken.get(token) ?? new Set<string>();
      if (entry.cursor !== undefined) {
        const page = await store.scanHoldings(chain, token, entry.cursor, fullPage);
        for (const row of page) {
          if (!NON_HOLDERS.has(row.holder))
            await add({ token, holder: row.holder, sampled: false, probe: false }, row.balance);
        }
        cursors.set(token, page.length < fullPage ? undefined : page[page.length - 1]!.holder);
      } else {
        for (const { address } of await store.listHolders(chain, token, 0, SAMPLE)) {
          if (!pending.has(address)) await add({ token, holder: address, sampled: true, probe: false });
        }
      }
      for (const holder of pending) await add({ token, holder, sampled: false, probe: false });
    }
    for (const [token, holders] of probed) {
      if ((await store.getToken(chain, token)) === null) continue;
      for (const holder of holders) await add({ token, holder, sampled: false, probe: true });
    }
    return { reads, cursors };
  }

  /** The first free correction log index of each token at `block`. */
  async function nextLogIndexes(tokens: Iterable<string>, block: number): Promise<Map<string, number>> {
    const next = new Map<string, number>();
    for (const token of tokens) {
      let index = RECONCILE_LOG_INDEX_BASE;
      let after = { blockNumber: block, logIndex: RECONCILE_LOG_INDEX_BASE - 1 };
      for (;;) {
        const page = await store.scanBalanceChanges(chain, token, after, 1_000);
        const here = page.filter((c) => c.blockNumber === block);
        if (here.length > 0) index = here[here.length - 1]!.logIndex + 1;
        if (page.length < 1_000 || here.length < page.length) break;
        after = { blockNumber: block, logIndex: index - 1 };
      }
      next.set(token, index);
    }
    return next;
  }

  async function round(): Promise<boolean> {
    if (followed.size === 0 && probes.size === 0) return false;
    const status = await store.getChainStatus(chain);
    // Deferred balances are not those of the checkpoint: wait until the backfill writes them.
    if (status === null || status.balancesBlock !== undefined) return false;
    const checkpoint = await store.getCheckpoint(chain);
    if (checkpoint === null || status.head - checkpoint.block > options.finalityDepth) return false;
    const block = checkpoint.block;
    // Taken now: logs committed from here on are read at a later round.
    const taken = new Map([...followed].map(([token, entry]) => [token, entry.pending]));
    for (const entry of followed.values()) entry.pending = new Set();
    const probed = new Map(probes);
    probes.clear();
    const giveBack = () => {
      for (const [token, pending] of taken) {
        const entry = followed.get(token);
        if (entry !== undefined) for (const holder of pending) entry.pending.add(holder);
      }
      for (const [token, holders] of probed) {
        if (followed.has(token)) for (const holder of holders) followed.get(token)!.pending.add(holder);
        else if (!probes.has(token)) probes.set(token, holders);
      }
    };
    try {
      stats.rounds++;
      const { reads, cursors } = await plan(taken, probed);
      if (reads.length === 0) return false;
      const useMulticall = await hasMulticall(block);
      stats.pairs += reads.length;
      stats.nodeCalls += useMulticall ? Math.ceil(reads.length / MULTICALL_CHUNK) : reads.length;
      const onNode = await source.readBalancesAt(reads, block, { multicall: useMulticall });

      const changes: BalanceChange[] = [];
      const silent = new Set<string>();
      const offProbes = new Set<string>();
      reads.forEach((read, i) => {
        const node = onNode[i];
        if (node === null || node === undefined || node === read.stored) return;
        changes.push({
          token: read.token,
          blockNumber: block,
          logIndex: 0,
          holder: read.holder,
          amount: node - read.stored,
        });
        if (read.sampled) silent.add(read.token);
        if (read.probe) offProbes.add(read.token);
      });
      if (changes.length > 0) {
        const next = await nextLogIndexes(new Set(changes.map((c) => c.token)), block);
        for (const change of changes) {
          const index = next.get(change.token)!;
          change.logIndex = index;
          next.set(change.token, index + 1);
        }
        // The head the batch records (for `/status`): the newest the indexer has written.
        const head = (await store.getChainStatus(chain))?.head ?? status.head;
        try {
          await store.applyBatch({
            chain,
            fromBlock: block + 1,
            continues: block,
            toBlock: block,
            toBlockHash: checkpoint.hash,
            transfers: [],
            balanceChanges: changes,
            tokens: [],
            blocks: [],
            head,
            pruneBlocksBelow: 0,
          });
        } catch (error) {
          const now = await store.getCheckpoint(chain);
          if (!(error instanceof TokenqueryError) || now?.block === block) throw error;
          // A block committed while the balances were read: all again at the new checkpoint.
          stats.refused++;
          giveBack();
          return true;
        }
        stats.corrections += changes.length;
      }
      for (const [token, cursor] of cursors) {
        const entry = followed.get(token);
        if (entry !== undefined) entry.cursor = cursor;
      }
      // A sampled holder off though no log named it: every balance moved (a rebase); read all.
      for (const token of silent) {
        const entry = followed.get(token);
        if (entry !== undefined && entry.cursor === undefined) entry.cursor = null;
      }
      for (const token of offProbes) follow(token);
      if (changes.length > 0 || silent.size > 0 || offProbes.size > 0) {
        logger.debug(
          { block, corrections: changes.length, silent: silent.size, takenUp: offProbes.size },
          'reconciled balances with balanceOf',
        );
      }
      return changes.length > 0 || [...followed.values()].some((e) => e.cursor !== undefined);
    } catch (error) {
      giveBack();
      throw error;
    }
  }

  return {
    adopt(tokens) {
      for (const token of tokens) {
        const entry = follow(token);
        if (entry.cursor === undefined) entry.cursor = null;
      }
    },
    committed(transfers, changes, range) {
      const probing = range.head - range.to <= options.finalityDepth;
      let wanted = followed.size > 0;
      for (const t of transfers) {
        if (name(t.token, t.from, probing)) wanted = true;
        if (name(t.token, t.to, probing)) wanted = true;
      }
      for (const c of changes) if (name(c.token, c.holder, probing)) wanted = true;
      return wanted;
    },
    rolledBack() {
      for (const entry of followed.values()) entry.cursor = null;
    },
    round,
    stats,
  };
}
