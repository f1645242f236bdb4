import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runNeoDecodeBench } from './neo-decode.js';

describe('NEO decoding benchmark', () => {
  test('decodes the corpus it claims and reports positive rates', () => {
    const report = runNeoDecodeBench({ minSeconds: 0.05, warmupRounds: 5 });
    assert.deepEqual(
      [report.block.transactions, report.block.nep5Transfers, report.block.assetTransfers],
      [38, 3, 21],
    );
    assert.deepEqual([report.logs.logs, report.logs.transfers], [4, 5]);
    for (const rate of [report.block, report.logs]) {
      assert.ok(rate.rounds >= 10 && rate.seconds > 0 && rate.perSecond > 0 && rate.transfersPerSecond > 0);
    }
  });
});
