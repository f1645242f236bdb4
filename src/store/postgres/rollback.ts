/**
 * `rollback` of the PostgreSQL store: undoes every block above the target exactly. The candidate
 * tokens come from the rollback journal (or a probe of all tokens below its floor); their
 * transfers and balance changes above the target are deleted, tokens first seen above it are
 * dropped whole, and the others get the net changes of the deleted rows back (apply-batch.ts `applyChanges`).
 */
import type pg from 'pg';
import type { Logger } from '../../internal/logger.js';
import { checkRollback } from '../batch-plan.js';
import { journalCovers, rollBackToken, rollbackResult } from '../rollback-plan.js';
import type { RollbackResult } from '../types.js';
import { countNamed, executeChanges, prepareChanges, type TokenChange } from './apply-batch.js';
import { int4Array } from './binary-arrays.js';
import { buildBulkLoad } from './bulk-load.js';
import { decodeAmount, decodeHex, encodeHex } from './codec.js';
import { hasNeoData } from './neo-tables.js';
import { run, runnerOn } from './statements.js';
import type { LockChain } from './transactions.js';

/** Rolls `chain` back to `toBlock` in `client`'s transaction, under the chain's write lock (`lockChain`). */
export async function rollbackIn(
  client: pg.PoolClient,
  lockChain: LockChain,
  chain: string,
  toBlock: number,
  toBlockHash: string | null,
  logger: Logger,
): Promise<RollbackResult> {
  const current = await lockChain(client, chain);
  // A waiting bulk load is built first: the rollback then undoes blocks like any.
  if (current?.bulk_block != null) await buildBulkLoad(client, chain, current, logger);
  const neoData = await hasNeoData(runnerOn(client), chain);
  checkRollback(chain, current?.indexed_block, toBlock, neoData);
  const candidates = await run<{ token_id: number }>(
    client,
    journalCovers(toBlock, current.journal_floor) ? 'journalTokens' : 'probeTokens',
    [chain, toBlock],
  );
  const tokenIds = candidates.rows.map((r) => r.token_id);

  const affected: string[] = [];
  let removedTransfers = 0;
  let removedTokens = 0;
  if (tokenIds.length > 0) {
    const removed = await run<{ token_id: number; from_addr: string; to_addr: string; value: string }>(
      client,
      'deleteTransfersAbove',
      [int4Array(tokenIds), toBlock],
    );
    removedTransfers = removed.rows.length;
    const byToken = new Map<number, typeof removed.rows>();
    for (const r of removed.rows) {
      let list = byToken.get(r.token_id);
      if (list === undefined) {
        list = [];
        byToken.set(r.token_id, list);
      }
      list.push(r);
    }
    const removedChanges = await run<{ token_id: number; holder: string; amount: string }>(
      client,
      'deleteBalanceChangesAbove',
      [int4Array(tokenIds), toBlock],
    );
    const changesByToken = new Map<number, (readonly [string, bigint])[]>();
    for (const r of removedChanges.rows) {
      let list = changesByToken.get(r.token_id);
      if (list === undefined) {
        list = [];
        changesByToken.set(r.token_id, list);
        if (!byToken.has(r.token_id)) byToken.set(r.token_id, []);
      }
      list.push([decodeHex(r.holder), decodeAmount(r.amount)]);
    }
    const tokens = await run<{ id: number; address: string; first_block: number }>(client, 'tokensById', [
      int4Array([...byToken.keys()]),
    ]);
    const dropped: number[] = [];
    const changes: TokenChange[] = [];
    for (const token of tokens.rows) {
      const rows = byToken.get(token.id)!;
      affected.push(decodeHex(token.address));
      const kept = rollBackToken(
        token.first_block,
        toBlock,
        rows,
        (r) => [decodeHex(r.from_addr), decodeHex(r.to_addr), decodeAmount(r.value)] as const,
        { rows: changesByToken.get(token.id) ?? [], decode: (c) => c },
      );
      if (kept === null) dropped.push(token.id);
      else {
        const named = new Map<string, number>();
        for (const r of rows) countNamed(named, decodeHex(r.from_addr), decodeHex(r.to_addr), -1);
        changes.push({ id: token.id, ...kept, named });
      }
    }
    if (dropped.length > 0) {
      await run(client, 'dropTokens', [int4Array(dropped)]);
      removedTokens = dropped.length;
    }
    if (changes.length > 0) await executeChanges(client, prepareChanges(changes, true));
  }
  await run(client, 'afterRollback', [
    chain,
    toBlock,
    toBlockHash === null ? null : encodeHex(toBlockHash),
    Date.now(),
    removedTokens,
    removedTransfers,
  ]);
  return rollbackResult(affected, removedTransfers);
}
