/**
 * From the balance events of a range (WETH9's `Deposit`/`Withdrawal`, Tether's `Issue`/`Redeem`/
 * `DestroyedBlackFunds`, decoded by the source) to the balance changes its batch applies. Three
 * decisions are made here, and docs/reliability.md ("Exact balances") states them:
 *
 * 1. Which contracts: a token of the index (one a `Transfer` of the range or the store names),
 *    or a contract that answers like an ERC-20 token (`looksLikeTokens`) at its event's block,
 *    which then becomes a token of the index at once. So WETH9's deposits before its first
 *    `Transfer` count, and a staking contract that logs the same `Deposit(address indexed,
 *    uint256)` does not become a token. The answer is kept for the process's life.
 * 2. Never twice (a vault that logs both a `Deposit` and a `Transfer` mint for one change): a
 *    `Deposit(dst, wad)` is dropped when the same transaction logs a `Transfer` of the same token
 *    from the zero address of the same `wad` (to `dst` or anyone: a vault may mint to another
 *    recipient than the depositor); a `Withdrawal(src, wad)` when it logs one to the zero address
 *    of `wad`. One transfer cancels one event. WETH9 cannot log a non-zero transfer from the zero
 *    address (nobody can spend its balance), so none of its events is ever dropped.
 * 3. Whose balance `Issue`/`Redeem` move: the contract's `owner()` at the event's block, read from
 *    the node (Tether's ownership moves without a log). A contract without an answering `owner()`
 *    has its `Issue`/`Redeem` dropped, with a warning.
 */

import type { BalanceEvent, EvmSource } from '../chains/evm/types.js';
import { ZERO_ADDRESS } from '../internal/chains.js';
import type { Logger } from '../internal/logger.js';
import type { BalanceChange, TransferRecord } from '../store/types.js';

export interface BalanceEventsOptions {
  source: Pick<EvmSource, 'readOwners' | 'looksLikeTokens'>;
  logger: Logger;
  /** Whether the store already knows `token` as a token of the chain (a read, unless remembered). */
  isStoredToken(token: string): Promise<boolean>;
  /**
   * Tokens this process knows the store holds (no read): a contract probed as no token that
   * later logged a `Transfer` is found here, so a probed one is never read from the store again.
   */
  knownTokens: ReadonlySet<string>;
}

/** See the module comment. */
export interface BalanceEvents {
  /** The balance changes of a range's `events` beside its `transfers`, in chain order. */
  changesOf(transfers: readonly TransferRecord[], events: readonly BalanceEvent[]): Promise<BalanceChange[]>;
}

const CREDITS: ReadonlySet<BalanceEvent['kind']> = new Set(['deposit', 'issue']);

export function createBalanceEvents(options: BalanceEventsOptions): BalanceEvents {
  const { source, logger, isStoredToken, knownTokens } = options;
  /** Contracts found to be (or not to be) tokens, by their balance events' probe. */
  const probed = new Map<string, Promise<boolean>>();

  /** Which of the events' contracts are tokens of the index (see the module comment, 1). */
  async function tokensAmong(
    transfers: readonly TransferRecord[],
    events: readonly BalanceEvent[],
  ): Promise<Set<string>> {
    const named = new Set<string>();
    for (const t of transfers) named.add(t.token);
    const firstBlock = new Map<string, number>();
    for (const e of events)
      if (!named.has(e.token) && !firstBlock.has(e.token)) firstBlock.set(e.token, e.blockNumber);
    const tokens = new Set<string>();
    const unknown: string[] = [];
    for (const token of firstBlock.keys()) {
      if (knownTokens.has(token)) tokens.add(token);
      // Probed before: the store did not hold it then, and a commit since would be in `knownTokens`.
      else if (probed.has(token)) unknown.push(token);
      else if (await isStoredToken(token)) tokens.add(token);
      else unknown.push(token);
    }
    // Probed one block at a time (a contract exists at its own event's block); few, and once each.
    const byBlock = new Map<number, string[]>();
    for (const token of unknown) {
      if (probed.has(token)) continue;
      const block = firstBlock.get(token)!;
      byBlock.set(block, [...(byBlock.get(block) ?? []), token]);
    }
    for (const [block, contracts] of byBlock) {
      const answer = source.looksLikeTokens(contracts, block);
      contracts.forEach((token, i) => {
        const one = answer.then((shapes) => shapes[i] === true);
        one.catch(() => probed.delete(token)); // a failed probe is asked again next time
        probed.set(token, one);
      });
    }
    for (const token of unknown) if (await probed.get(token)!) tokens.add(token);
    for (const e of events) if (named.has(e.token)) tokens.add(e.token);
    return tokens;
  }

  return {
    async changesOf(transfers, events) {
      if (events.length === 0) return [];
      const tokens = await tokensAmong(transfers, events);
      // Rule 2: the mints and burns each transaction logs, as a multiset.
      const logged = new Map<string, number>();
      const key = (side: string, tx: string, token: string, amount: bigint): string =>
        `${side}:${tx}:${token}:${amount}`;
      const eventTxs = new Set(events.map((e) => e.txHash));
      for (const t of transfers) {
        if (!eventTxs.has(t.txHash) || t.from === t.to) continue;
        if (t.from === ZERO_ADDRESS) {
          const k = key('in', t.txHash, t.token, t.value);
          logged.set(k, (logged.get(k) ?? 0) + 1);
        } else if (t.to === ZERO_ADDRESS) {
          const k = key('out', t.txHash, t.token, t.value);
          logged.set(k, (logged.get(k) ?? 0) + 1);
        }
      }
      const kept = events.filter((e) => {
        if (!tokens.has(e.token) || e.amount === 0n) return false;
        if (e.kind !== 'deposit' && e.kind !== 'withdrawal') return true;
        const k = key(e.kind === 'deposit' ? 'in' : 'out', e.txHash, e.token, e.amount);
        const count = logged.get(k) ?? 0;
        if (count === 0) return true;
        logged.set(k, count - 1);
        return false;
      });
      // Rule 3: owners of the Issue/Redeem contracts at their blocks, one read per (contract, block).
      const ownerKeys = [
        ...new Set(kept.filter((e) => e.holder === null).map((e) => `${e.token}@${e.blockNumber}`)),
      ];
      const owners = new Map<string, string | null>();
      if (ownerKeys.length > 0) {
        const asked = ownerKeys.map((k) => {
          const [contract, block] = k.split('@') as [string, string];
          return { contract, block: Number(block) };
        });
        const answers = await source.readOwners(asked);
        ownerKeys.forEach((k, i) => {
          owners.set(k, answers[i] ?? null);
        });
      }
      const changes: BalanceChange[] = [];
      for (const e of kept) {
        const holder = e.holder ?? owners.get(`${e.token}@${e.blockNumber}`) ?? null;
        if (holder === null) {
          logger.warn(
            { token: e.token, block: e.blockNumber, event: e.kind },
            'an Issue/Redeem whose contract answers no owner() at its block is not applied',
          );
          continue;
        }
        changes.push({
          token: e.token,
          blockNumber: e.blockNumber,
          logIndex: e.logIndex,
          holder,
          amount: CREDITS.has(e.kind) ? e.amount : -e.amount,
        });
      }
      return changes;
    },
  };
}
