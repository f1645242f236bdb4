/**
 * The SQLite writer's columnar batch path: a batch's transaction for a batch as the writer thread
 * receives it (see `planWire` in batch-wire.ts), the same steps as apply-batch.ts's without a
 * transfer object per row.
 */

import { type BatchContext, type BatchSteps, pushTransferParams } from './apply-batch.js';
import type { BatchBalances } from './balances.js';
import { planWire, type WireBatch } from './batch-wire.js';
import { allHashesLowerHex, isLowerHex } from './codec.js';

/**
 * The batch's transaction from its columns; runs it with `.immediate`. The rows are inserted
 * straight from the columns, each address's digits worked out once, and the hashes checked in
 * one pass over their joined text.
 */
export function createApplyWireTx(context: BatchContext, steps: BatchSteps) {
  const { db, bulk, hexRows, addresses: addressEntries, changes } = context;
  const { bytesOfAddress, insertHexRow, flushHexRows } = hexRows;
  const { beginBatch, tokenIds, blockJournal, finishBatch, bulkLoad } = steps;
  return db.transaction((wire: WireBatch): BatchBalances => {
    const stored = beginBatch(wire);
    if (bulkLoad.accepts(wire, stored)) return bulkLoad.append(wire, stored);
    const plan = planWire(wire);
    const { work, hashStarts } = plan;
    const { addresses, fromOf, toOf, numbers, hashes, hashLengths, hashOf, values } = wire.transferColumns;
    const { ids, newTokens } = tokenIds(wire, work);
    const journal = blockJournal(wire);
    // Through the writer's memo (bytesOfAddress), where the balance upserts then find them.
    const bytes = addresses.map(bytesOfAddress);
    const hashesLowerHex = allHashesLowerHex(hashes, hashLengths.length);
    // Each distinct hash's digits (without `0x`), or null if it is not lower-case hex; made on first use.
    const hashDigits: (string | null | undefined)[] = new Array(hashLengths.length);
    const digitsOfHash = (k: number): string | null => {
      let made = hashDigits[k];
      if (made === undefined) {
        const hash = hashes.slice(hashStarts[k]!, hashStarts[k + 1]!);
        made = hashesLowerHex || isLowerHex(hash) ? hash.slice(2) : null;
        hashDigits[k] = made;
      }
      return made;
    };
    const transferRows: unknown[] = [];
    const transferCounts: number[] = [];
    // `addresses` is distinct: a transfer names one entry per position, a self-transfer once.
    const addressIds = addressEntries.idsOf(wire.chain, addresses);
    let k = 0;
    for (const token of work.values()) {
      const id = ids[k++]!;
      transferCounts.push(token.rows.length);
      for (const i of token.rows) {
        const block = numbers[i * 4]!;
        const logIndex = numbers[i * 4 + 1]!;
        const txIndex = numbers[i * 4 + 2]!;
        const time = numbers[i * 4 + 3]!;
        const value = values[i]!;
        const from = bytes[fromOf[i]!];
        const to = bytes[toOf[i]!];
        const hash = hashOf[i]!;
        const txHashDigits = digitsOfHash(hash);
        if (from != null && to != null && value >= 0n && txHashDigits !== null) {
          insertHexRow(id, block, logIndex, txIndex, txHashDigits, from, to, value, time);
        } else {
          pushTransferParams(transferRows, id, {
            blockNumber: block,
            logIndex,
            txIndex,
            txHash: hashes.slice(hashStarts[hash]!, hashStarts[hash + 1]!),
            from: addresses[fromOf[i]!]!,
            to: addresses[toOf[i]!]!,
            value,
            time,
          });
        }
        journal.add(block, id);
        const fromPosition = fromOf[i]!;
        const toPosition = toOf[i]!;
        addressEntries.add(addressIds[fromPosition]!, id, block, logIndex);
        if (toPosition !== fromPosition) addressEntries.add(addressIds[toPosition]!, id, block, logIndex);
      }
    }
    flushHexRows();
    bulk.insertTransfers.run(transferRows);
    changes.insert(work, ids, journal);
    journal.write();
    return finishBatch(wire, stored, work, { ids, newTokens, transferCounts }, plan.recent);
  });
}
