import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeBlock, invocationTxids, parseBlock, parseRawTransaction } from './block.js';
import { InvalidRpcResponseError } from './errors.js';
import { parseApplicationLog } from './nep5.js';
import {
  loadExpectedNep5Transfers,
  loadNeoGoExamples,
  loadNeoscanRecordings,
  loadRpcCases,
} from './testing/recordings.js';

const recordings = loadNeoscanRecordings();
const rawBlock = (index: number) => structuredClone(recordings.blocks.find((b) => b.index === index)!);
const RPX_CALL = '0xc920b2192e74eda4ca6140510813aa40fef1767d00c152aa6f8027c24bdf14f2';

describe('verbose blocks', () => {
  test('every recorded mainnet block validates, with its transactions and their UTXO parts', () => {
    for (const raw of recordings.blocks) {
      const index = raw.index as number;
      const block = parseBlock(raw, index);
      const txs = raw.tx as { txid: string; vin: unknown[]; vout: unknown[] }[];
      assert.equal(block.hash, raw.hash);
      assert.deepEqual(
        block.transactions.map(({ tx }) => [tx.txid, tx.inputs.length, tx.outputs.length]),
        txs.map((tx) => [tx.txid, tx.vin.length, tx.vout.length]),
      );
    }
  });

  test('block 1444843: 38 transactions, the RPX deploy call minting 3 balances, no contract creation', () => {
    const parsed = parseBlock(rawBlock(1444843), 1444843);
    assert.deepEqual(invocationTxids(parsed), [RPX_CALL]);
    const log = recordings.applicationLogs.find((l) => l.txid === RPX_CALL)!;
    const { block, warnings } = decodeBlock(
      parsed,
      new Map([[RPX_CALL, parseApplicationLog(log.result, RPX_CALL)]]),
    );
    assert.deepEqual(warnings, []);
    assert.equal(block.transactions.length, 38);
    assert.equal(block.time, 1507466032);
    assert.deepEqual(block.deployments, []);
    assert.deepEqual(block.assetRegistrations, []);
    const expected = loadExpectedNep5Transfers()[RPX_CALL.slice(2)]!;
    assert.deepEqual(
      block.nep5Transfers.map((t) => [
        t.token,
        t.from,
        t.to,
        t.value,
        t.txIndex,
        t.logIndex,
        t.blockNumber,
        t.time,
      ]),
      expected.map((e, i) => [e.contract, '', e.to_address, BigInt(e.amount_raw), 1, i, 1444843, 1507466032]),
    );
    const call = block.transactions[1]!;
    assert.equal(call.faulted, false);
    assert.equal(block.transactions[0]!.faulted, null);
    // Value amounts are exact Fixed8 units: 39.999 GAS of change.
    assert.equal(call.outputs[0]!.value, 3_999_900_000n);
    assert.equal(call.netFee, 100_000n);
    const claim = block.transactions.find((tx) => tx.type === 'ClaimTransaction')!;
    assert.equal(claim.claims.length, 1);
  });

  test('the genesis block registers NEO and GAS and issues all NEO', () => {
    const { block } = decodeBlock(parseBlock(rawBlock(0), 0), new Map());
    assert.deepEqual(
      block.assetRegistrations.map((r) => [r.assetId, r.register?.name, r.registrarAddress, r.time]),
      [
        ['0xc56f33fc6ecfcd0c225c4ab356fee59390af8560be0e930faebe74a6daff7c9b', 'AntShare', null, 1468595301],
        ['0x602c79718b16e442de58778e148d0b1084e3b2dffd5de6b7b16cee7969282de7', 'AntCoin', null, 1468595301],
      ],
    );
    const issue = block.transactions[3]!;
    assert.equal(issue.type, 'IssueTransaction');
    assert.equal(issue.outputs[0]!.value, 100_000_000n * 100_000_000n);
  });

  test('a block whose invocation log is missing cannot be decoded', () => {
    const parsed = parseBlock(rawBlock(1444843), 1444843);
    assert.throws(() => decodeBlock(parsed, new Map()), /no application log/);
  });

  test('malformed and inconsistent blocks are invalid answers naming the field', () => {
    const cases: [(b: Record<string, unknown>) => void, RegExp][] = [
      [(b) => (b.index = 5), /answered block 5/],
      [(b) => (b.hash = '0x12'), /\.hash is not a 32-byte hash/],
      [(b) => (b.time = -1), /\.time is not a non-negative integer/],
      [(b) => (b.tx = {}), /\.tx is not an array/],
      [(b) => (b.tx as unknown[]).shift(), /first transaction is not a MinerTransaction/],
      [(b) => (b.tx as unknown[]).push((b.tx as unknown[])[4]), /appears twice/],
      [(b) => (tx(b, 4).type = 'TransferTransaction'), /tx\[4\]\.type "TransferTransaction" is not/],
      [
        (b) => (out(b, 4).address = 'AWrAn2pkW4LPj8qvduJsBxxhWmHEPNrYTC'),
        /tx\[4\]\.vout\[0\]\.address is not a NEO address/,
      ],
      [(b) => (out(b, 4).value = '1e3'), /vout\[0\]\.value is not a Fixed8 amount/],
      [(b) => (out(b, 4).n = 1), /vout\[0\]\.n is not its position 0/],
      [(b) => (out(b, 4).asset = 'NEO'), /vout\[0\]\.asset is not a 32-byte hash/],
      [(b) => ((tx(b, 4).vin as { vout: unknown }[])[0]!.vout = '0'), /vin\[0\]\.vout is not a non-negative/],
      [(b) => delete tx(b, 2).claims, /tx\[2\]\.claims is not an array/],
      [(b) => (tx(b, 1).script = 'xyz'), /tx\[1\]\.script is not hex/],
      [
        (b) => ((tx(b, 1).scripts as { verification: unknown }[])[0]!.verification = null),
        /verification is not hex/,
      ],
    ];
    for (const [edit, message] of cases) {
      const b = rawBlock(1444843);
      edit(b);
      assert.throws(() => parseBlock(b, 1444843), InvalidRpcResponseError, String(message));
      assert.throws(() => parseBlock(b, 1444843), message);
    }
    assert.throws(() => parseBlock(null, 1), /getblock 1 is not an object/);
  });

  test('recorded getrawtransaction answers validate, with their block', () => {
    for (const raw of recordings.transactions) {
      const tx = parseRawTransaction(raw, raw.txid as string);
      assert.equal(tx.blockHash, raw.blockhash);
      assert.equal(tx.blockTime, raw.blocktime);
    }
    const first = recordings.transactions[0]!;
    assert.throws(() => parseRawTransaction(first, `0x${'00'.repeat(32)}`), /answered transaction/);
    const pool = structuredClone(first);
    delete pool.blockhash;
    assert.equal(parseRawTransaction(pool, first.txid as string).blockHash, null);
  });

  test('TestNet and neo-go answer shapes validate too', () => {
    const cases = loadRpcCases();
    const testnetBlock = cases.find((c) => c.name === 'getBlockVerboseIndex')!.response.result;
    assert.equal(parseBlock(testnetBlock, 1).transactions.length, 1);
    const testnetTx = cases.find((c) => c.name === 'getRawTransactionVerbose')!;
    const tx = parseRawTransaction(testnetTx.response.result, `0x${testnetTx.params[0] as string}`);
    assert.ok(tx.outputs.length > 0);
    const neoGoBlock = loadNeoGoExamples().find(
      (e) => e.method === 'getblock' && typeof e.response.result === 'object',
    )!.response.result;
    assert.equal(parseBlock(neoGoBlock, 1).index, 1);
  });
});

function tx(block: Record<string, unknown>, i: number): Record<string, unknown> {
  return (block.tx as Record<string, unknown>[])[i]!;
}

function out(block: Record<string, unknown>, i: number): Record<string, unknown> {
  return (tx(block, i).vout as Record<string, unknown>[])[0]!;
}
