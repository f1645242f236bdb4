import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { indexBatch, tokenMetadata } from '../testing/batches.js';
import type { TransferRecord } from '../types.js';
import { batchFromWire, batchToWire } from './batch-wire.js';

describe('batch wire format', () => {
  it('gives back exactly the batch it was given, after a structured clone', () => {
    const transfers: TransferRecord[] = [
      {
        token: '0xdac17f958d2ee523a2206206994597c13d831ec7',
        blockNumber: 17_173_049,
        logIndex: 0,
        txIndex: 3,
        txHash: `0x${'ab'.repeat(32)}`,
        from: '0x0000000000000000000000000000000000000000',
        to: '0x000000000000000000000000000000000000dead',
        value: 2n ** 256n - 1n,
        time: 1_682_000_000,
      },
      // NEO: base58 addresses, "" for a mint, and a second token.
      {
        token: '0xecc6b20d3ccac1ee9ef109af5a7cdb85706b1df9',
        blockNumber: 1_444_843,
        logIndex: 7,
        txIndex: 0,
        txHash: `0x${'cd'.repeat(32)}`,
        from: '',
        to: 'AXsGdFj8hpdX4xZmGh7GnsYGNPUr9nbTxy',
        value: 0n,
        time: 1_500_000_000,
      },
      {
        token: '0xdac17f958d2ee523a2206206994597c13d831ec7',
        blockNumber: Number.MAX_SAFE_INTEGER,
        logIndex: 2 ** 31,
        txIndex: 0,
        txHash: '0x',
        from: 'é日本',
        to: '0xABCDEF',
        value: 1n,
        time: 0,
      },
      // Addresses met before, in other roles (the wire sends each address once).
      {
        token: '0xecc6b20d3ccac1ee9ef109af5a7cdb85706b1df9',
        blockNumber: 1_444_844,
        logIndex: 0,
        txIndex: 1,
        txHash: `0x${'ef'.repeat(32)}`,
        from: '0x000000000000000000000000000000000000dead',
        to: '',
        value: 5n,
        time: 1_500_000_015,
      },
      // A second transfer of that transaction, and a third of the first one's, after others.
      {
        token: '0xecc6b20d3ccac1ee9ef109af5a7cdb85706b1df9',
        blockNumber: 1_444_844,
        logIndex: 1,
        txIndex: 1,
        txHash: `0x${'ef'.repeat(32)}`,
        from: '0x000000000000000000000000000000000000dead',
        to: '0x0000000000000000000000000000000000000000',
        value: 6n,
        time: 1_500_000_015,
      },
      {
        token: '0xecc6b20d3ccac1ee9ef109af5a7cdb85706b1df9',
        blockNumber: 1_444_844,
        logIndex: 2,
        txIndex: 1,
        txHash: `0x${'ab'.repeat(32)}`,
        from: '0x000000000000000000000000000000000000dead',
        to: '0x0000000000000000000000000000000000000000',
        value: 7n,
        time: 1_500_000_015,
      },
    ];
    const batch = indexBatch({
      fromBlock: 1,
      toBlock: 2,
      transfers,
      tokens: [tokenMetadata(transfers[0]!.token, { name: 'Tether', symbol: 'USDT', decimals: 6 })],
      head: 9,
      pruneBlocksBelow: 3,
    });
    const wire = structuredClone(batchToWire(batch));
    assert.equal(wire.transferColumns.addresses.length, 6);
    // Consecutive transfers of one transaction name its hash once.
    assert.deepEqual([...wire.transferColumns.hashOf], [0, 1, 2, 3, 3, 4]);
    assert.deepEqual(batchFromWire(wire), batch);
    assert.deepEqual(batchFromWire(structuredClone(batchToWire({ ...batch, transfers: [] }))), {
      ...batch,
      transfers: [],
    });
  });
});
