/**
 * What the SQLite store's own tests feed it and read back: twelve batches of random transfers
 * with every kind of row a batch writes, and every row of the tables they write.
 */
import Database from 'better-sqlite3';
import { ZERO_ADDRESS } from '../../../internal/chains.js';
import { seededRandomInt } from '../../../internal/random.js';
import { indexBatch, tokenMetadata } from '../../testing/batches.js';
import type { IndexBatch } from '../../types.js';

/** The first token of {@link randomBatches}. */
export const RANDOM_TOKEN = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';

/**
 * Twelve batches of random transfers (the same on every run): every kind of row the batches write.
 * With `balanceChanges`, each batch also carries random balance changes without a transfer
 * (`IndexBatch.balanceChanges`, credits and debits, some of uint256 size) beside its transfers.
 */
export function randomBatches(options: { balanceChanges?: boolean } = {}): IndexBatch[] {
  // mulberry32: the same batches on every run.
  const rand = seededRandomInt(7);
  const hex = (n: number, digits: number): string => n.toString(16).padStart(digits, '0');
  const tokens = [RANDOM_TOKEN, `0x${hex(0xabc, 40)}`, `0x${hex(0xdef, 40)}`];
  // Lower-case hex (the fast path), upper-case hex, a NEO address, the zero and dead addresses.
  const holders = [
    ...Array.from({ length: 30 }, (_, i) => `0x${hex(0x5000 + i * 977, 40)}`),
    `0x${hex(0xbeef, 40).toUpperCase()}`,
    'AXsGdFj8hpdX4xZmGh7GnsYGNPUr9nbTxy',
    ZERO_ADDRESS,
    '0x000000000000000000000000000000000000dead',
  ];
  const batches: IndexBatch[] = [];
  for (let b = 0; b < 12; b++) {
    const fromBlock = 1 + b * 10;
    const transfers = Array.from({ length: 40 + rand(80) }, (_, i) => {
      const blockNumber = fromBlock + Math.floor(i / 20);
      const from = holders[rand(holders.length)]!;
      return {
        token: tokens[rand(tokens.length)]!,
        blockNumber,
        logIndex: i,
        txIndex: i >> 1,
        // 32-byte hashes, two transfers a transaction (the wire sends such a hash once), and in
        // every other batch now and then one the fast path leaves to the general statement (the
        // other batches' hashes are checked in one pass).
        txHash:
          b % 2 === 0 && rand(25) === 0
            ? `0x${hex(i >> 1, 8).toUpperCase()}`
            : `0x${hex(blockNumber, 32)}${hex(i >> 1, 32)}`,
        from,
        to: rand(10) === 0 ? from : holders[rand(holders.length)]!,
        value: rand(8) === 0 ? 2n ** 200n + BigInt(rand(1000)) : BigInt(rand(1_000_000)) * 10n ** 9n,
        time: 1_700_000_000 + blockNumber,
      };
    });
    const balanceChanges = options.balanceChanges
      ? Array.from({ length: 5 + rand(20) }, (_, k) => ({
          token: tokens[rand(tokens.length)]!,
          blockNumber: fromBlock + rand(10),
          // Above the transfers' log indexes (at most 120 a batch), in order within the batch.
          logIndex: 200 + k,
          holder: holders[rand(holders.length)]!,
          amount:
            (rand(3) === 0 ? -1n : 1n) *
            (rand(8) === 0 ? 2n ** 200n + BigInt(rand(1000)) : BigInt(1 + rand(1_000_000)) * 10n ** 9n),
        })).sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex)
      : undefined;
    batches.push(
      indexBatch({
        ...(balanceChanges === undefined ? {} : { balanceChanges }),
        fromBlock,
        toBlock: fromBlock + 9,
        toBlockHash: `0x${hex(fromBlock + 9, 64)}`,
        transfers,
        tokens: b === 0 ? tokens.map((address) => tokenMetadata(address, { name: 'T', symbol: 'T' })) : [],
        head: 200,
        // The newest blocks fall inside the unfinalized window, so the journal is written too.
        pruneBlocksBelow: 90,
      }),
    );
  }
  return batches;
}

/** Every row of every table the batches write (the chain's `updated_at` is the clock). */
export function dumpTables(path: string) {
  const db = new Database(path, { readonly: true });
  try {
    // Address entries by the address they name: ids depend on the order addresses were met.
    const entries = `SELECT a.chain, a.address, x.token_id, x.block_number, x.log_index
      FROM address_transfers AS x JOIN addresses AS a ON a.id = x.address_id ORDER BY 1, 2, 3, 4, 5`;
    return Object.fromEntries(
      [
        'transfers',
        'balance_changes',
        'balances',
        'tokens',
        'chains',
        'recent_block_tokens',
        'block_refs',
        entries,
      ].map((table) => [
        table.startsWith('SELECT') ? 'address_transfers' : table,
        db
          .prepare(table.startsWith('SELECT') ? table : `SELECT * FROM ${table} ORDER BY 1, 2, 3`)
          .all()
          .map((row) => ({ ...(row as object), updated_at: 0 })),
      ]),
    );
  } finally {
    db.close();
  }
}
