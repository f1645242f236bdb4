import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { silentLogger } from '../../internal/logger.js';
import type { TransferRecord } from '../../internal/records.js';
import { InvalidRpcResponseError, RangeTooLargeError, StateUnavailableError } from '../jsonrpc/errors.js';
import { createRpcClient } from '../jsonrpc/rpc-client.js';
import {
  BALANCE_EVENT_TOPICS,
  calldata,
  decodeBalanceEventLog,
  decodeTransferLog,
  TRANSFER_TOPIC,
} from './abi.js';
import { createEvmSource } from './source.js';
import {
  type FixtureLimits,
  type FixtureNode,
  type FixtureNodeOptions,
  startFixtureNode,
} from './testing/fixture-node.js';
import {
  type ExpectedTransfer,
  evmFixturePath,
  type FixtureSet,
  loadEthereumEtlSet,
  loadExpectedTokens,
  loadExpectedTransfers,
  loadPolygonEtlSet,
  parseJsonBigIntSafe,
} from './testing/fixture-sets.js';
import type { EvmSource } from './types.js';

async function withSource(
  options: FixtureNodeOptions,
  run: (source: EvmSource, node: FixtureNode) => Promise<void>,
): Promise<void> {
  const node = await startFixtureNode(options);
  try {
    const rpc = createRpcClient({ url: node.url, logger: silentLogger(), retryBaseMs: 1, retryMaxMs: 10 });
    await run(
      createEvmSource({ rpc, logger: silentLogger(), invalidAttempts: 2, invalidRetryBaseMs: 1 }),
      node,
    );
  } finally {
    await node.close();
  }
}

/**
 * Transfers decoded by the general path: logs and headers from the source, then the decoder (the
 * indexer's `getTransfers` reads most answers with the scanner, held to this path by its tests).
 */
async function indexRange(source: EvmSource, from: number, to: number, withTime: boolean) {
  // The balance events' logs come in the same answer; decoded apart (see the WETH test below).
  const logs = (await source.getTransferLogs(from, to)).filter((log) => log.topics[0] === TRANSFER_TOPIC);
  const numbers = [...new Set(logs.map((log) => log.blockNumber))];
  const headers = withTime ? await source.getHeaders(numbers) : [];
  const time = new Map(headers.map((h) => [h.number, h.timestamp]));
  const decoded = logs.map((log) => ({
    log,
    transfer: decodeTransferLog(log, time.get(log.blockNumber) ?? 0),
  }));
  return {
    logs,
    transfers: decoded.flatMap((d) => (d.transfer === null ? [] : [d.transfer])),
    rejected: decoded.flatMap((d) => (d.transfer === null ? [d.log] : [])),
  };
}

/** The fields ethereum-etl writes, from our record; `time` only when the expectation has one. */
function comparable(t: TransferRecord, withTime: boolean) {
  const row: Record<string, unknown> = {
    token: t.token,
    from: t.from,
    to: t.to,
    value: t.value,
    txHash: t.txHash,
    logIndex: t.logIndex,
    blockNumber: t.blockNumber,
  };
  if (withTime) row.time = t.time;
  return row;
}

function expectedRows(expected: ExpectedTransfer[], withTime: boolean) {
  return expected
    .map((e) => {
      const row: Record<string, unknown> = {
        token: e.token,
        from: e.from,
        to: e.to,
        value: e.value,
        txHash: e.txHash,
        logIndex: e.logIndex,
        blockNumber: e.blockNumber,
      };
      if (withTime) row.time = e.blockTimestamp;
      return row;
    })
    .sort(
      (a, b) =>
        (a.blockNumber as number) - (b.blockNumber as number) ||
        (a.logIndex as number) - (b.logIndex as number),
    );
}

describe('evm source: real transfers reproduce ethereum-etl', () => {
  test('blocks 17173049-17173050: 282 ERC-20 transfers exactly, the 9 ERC-721 ones left out', async () => {
    const set = loadEthereumEtlSet('stream_blocks_17173049_17173050');
    const expected = loadExpectedTransfers(
      'ethereum-etl/stream_blocks_17173049_17173050/expected_erc20_only_token_transfers.json',
    );
    const erc721 = loadExpectedTransfers(
      'ethereum-etl/stream_blocks_17173049_17173050/expected_erc721_style_transfers.json',
    );
    const allTransferRows = loadExpectedTransfers(
      'ethereum-etl/stream_blocks_17173049_17173050/expected/expected_token_transfers.json',
    );
    assert.equal(expected.length, 282);
    await withSource(set, async (source, node) => {
      const { logs, transfers, rejected } = await indexRange(source, 17173049, 17173050, true);
      assert.equal(logs.length, allTransferRows.length, 'every Transfer-topic log of the range');
      assert.deepEqual(
        transfers.map((t) => comparable(t, true)),
        expectedRows(expected, true),
      );
      assert.deepEqual(
        rejected.map((log) => `${log.transactionHash}:${log.logIndex}`).sort(),
        erc721.map((e) => `${e.txHash}:${e.logIndex}`).sort(),
      );
      assert.ok(rejected.every((log) => log.topics.length === 4 && log.data === '0x'));
      // Two blocks, one getLogs and one header batch.
      assert.equal(node.calls.get('eth_getLogs'), 1);
      assert.equal(node.calls.get('eth_getBlockByNumber'), 2);
    });
  });

  test('transaction positions match the exported logs', async () => {
    const set = loadEthereumEtlSet('stream_blocks_17173049_17173050');
    const expectedLogs = transactionIndexOfLogs();
    await withSource(set, async (source) => {
      const { transfers } = await indexRange(source, 17173049, 17173050, false);
      for (const t of transfers) assert.equal(t.txIndex, expectedLogs.get(`${t.txHash}:${t.logIndex}`));
    });
  });

  const small: [string, string, string, number, number, boolean][] = [
    [
      'blocks 1755634-1755635 (TheDAO token)',
      'stream_blocks_1755634_1755635',
      'expected_token_transfers.json',
      1755634,
      1755635,
      true,
    ],
    [
      'block 483920',
      'export_token_transfers_block_483920',
      'expected_token_transfers.csv',
      483920,
      483920,
      false,
    ],
    [
      'the logs of block 1452581 (CSV)',
      'extract_token_transfers_from_logs_csv',
      'expected_token_transfers.csv',
      1452581,
      1452581,
      false,
    ],
  ];
  for (const [name, dir, file, from, to, withTime] of small) {
    test(`${name}: the expected transfers exactly`, async () => {
      const expected = loadExpectedTransfers(`ethereum-etl/${dir}/${file}`);
      await withSource(loadEthereumEtlSet(dir), async (source) => {
        const { transfers } = await indexRange(source, from, to, withTime);
        assert.ok(transfers.length > 0);
        assert.deepEqual(
          transfers.map((t) => comparable(t, withTime)),
          expectedRows(expected, withTime),
        );
      });
    });
  }

  test('Polygon block 13572468: the 14 expected transfers exactly', async () => {
    const expected = loadExpectedTransfers(
      'polygon-etl/export_token_transfers_block_13572468/expected_token_transfers.csv',
    );
    assert.equal(expected.length, 14);
    await withSource(loadPolygonEtlSet('export_token_transfers_block_13572468'), async (source) => {
      const { transfers } = await indexRange(source, 13572468, 13572468, false);
      assert.deepEqual(
        transfers.map((t) => comparable(t, false)),
        expectedRows(expected, false),
      );
    });
  });

  test("blocks 17173049-17173050: WETH's 30 deposits and 31 withdrawals, as ethereum-etl exported them", async () => {
    // ethereum-etl's own export of every log of the range (not the recordings the node serves).
    const kinds = new Map(Object.entries(BALANCE_EVENT_TOPICS).map(([kind, topic]) => [topic, kind]));
    const expected = expectedLogRows()
      .filter((r) => kinds.has((r.topics as string[])[0]!))
      .map((r) => ({
        kind: kinds.get((r.topics as string[])[0]!),
        token: r.address,
        blockNumber: Number(r.block_number),
        logIndex: Number(r.log_index),
        txHash: r.transaction_hash,
        holder: `0x${(r.topics as string[])[1]!.slice(-40)}`,
        amount: BigInt(r.data as string),
      }))
      .sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
    assert.deepEqual(
      [
        expected.filter((e) => e.kind === 'deposit').length,
        expected.filter((e) => e.kind === 'withdrawal').length,
      ],
      [30, 31],
    );
    await withSource(loadEthereumEtlSet('stream_blocks_17173049_17173050'), async (source) => {
      // The backfill's path (the scanner) and the general path (logs, then the decoder) agree with it.
      const scanned = await source.getTransfers(17173049, 17173050);
      assert.deepEqual(scanned.events, expected);
      assert.equal(scanned.transfers.length, 282);
      const logs = await source.getTransferLogs(17173049, 17173050);
      assert.equal(scanned.logCount, logs.length);
      assert.deepEqual(
        logs.flatMap((log) => decodeBalanceEventLog(log) ?? []),
        expected,
      );
    });
  });

  test('a range refused by the provider surfaces as RangeTooLargeError', async () => {
    const limits: FixtureLimits = { maxResults: 150 };
    await withSource({ ...loadEthereumEtlSet('stream_blocks_17173049_17173050'), limits }, async (source) => {
      await assert.rejects(source.getTransferLogs(17173049, 17173050), RangeTooLargeError);
      // 114 Transfer logs and 25 of WETH's deposits and withdrawals.
      assert.equal((await source.getTransferLogs(17173049, 17173049)).length, 139);
    });
  });
});

/** `txHash:logIndex` → transaction_index, from ethereum-etl's exported logs of 17173049-17173050. */
function transactionIndexOfLogs(): Map<string, number> {
  const rows = expectedLogRows();
  return new Map(rows.map((r) => [`${r.transaction_hash}:${r.log_index}`, Number(r.transaction_index)]));
}

/** ethereum-etl's exported logs of 17173049-17173050, one object per line. */
function expectedLogRows(): Record<string, unknown>[] {
  const file = evmFixturePath('ethereum-etl/stream_blocks_17173049_17173050/expected/expected_logs.json');
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => parseJsonBigIntSafe(line) as Record<string, unknown>);
}

describe('evm source: logs by block hash', () => {
  test('the logs of exactly the named blocks, the same as by range', async () => {
    await withSource(loadEthereumEtlSet('stream_blocks_17173049_17173050'), async (source) => {
      const headers = await source.getHeaders([17173049, 17173050]);
      const byHash = await source.getTransferLogsOfBlocks(headers);
      assert.deepEqual(byHash, await source.getTransferLogs(17173049, 17173050));
      assert.ok(byHash.length > 0);
    });
  });

  test('a block the node does not know is a retryable error, never an empty list', async () => {
    await withSource(loadEthereumEtlSet('stream_blocks_17173049_17173050'), async (source) => {
      const [header] = await source.getHeaders([17173049]);
      await assert.rejects(
        source.getTransferLogsOfBlocks([header!, { number: 17173050, hash: `0x${'ab'.repeat(32)}` }]),
        (e: unknown) => e instanceof InvalidRpcResponseError && e.retryable,
      );
    });
  });
});

describe('evm source: log validation', () => {
  const set = (): FixtureSet => loadEthereumEtlSet('export_token_transfers_block_483920');

  test('removed logs are dropped, the rest come back in block and log order with timestamps', async () => {
    await withSource({ ...set(), logTimestamps: true }, async (source, node) => {
      node.injectFaults({
        type: 'rewrite',
        rewrite: (reply) => {
          const r = reply as { result: Record<string, unknown>[] };
          const [first, second] = r.result;
          return { ...r, result: [second, { ...first, removed: true }, { ...first, logIndex: '0x7' }] };
        },
      });
      const logs = await source.getTransferLogs(483920, 483920);
      assert.deepEqual(
        logs.map((l) => l.logIndex),
        [1, 7],
      );
      const block = set().blocks[0]!;
      assert.equal(logs[0]!.blockTimestamp, Number.parseInt(block.timestamp, 16));
    });
  });

  const corruptions: [string, (log: Record<string, unknown>) => Record<string, unknown>][] = [
    ['a malformed address', (log) => ({ ...log, address: '0x1234' })],
    ['a non-hex block number', (log) => ({ ...log, blockNumber: 483920 })],
    ['a pending log without a block number', (log) => ({ ...log, blockNumber: null })],
    ['a short transaction hash', (log) => ({ ...log, transactionHash: '0xabc' })],
    ['odd-length data', (log) => ({ ...log, data: '0x123' })],
    ['a topic that is not 32 bytes', (log) => ({ ...log, topics: ['0x1234'] })],
    ['a block outside the range asked for', (log) => ({ ...log, blockNumber: '0x1' })],
    ['another event topic', (log) => ({ ...log, topics: [`0x${'ab'.repeat(32)}`] })],
    ['two hashes for one block', (log) => ({ ...log, blockHash: `0x${'cd'.repeat(32)}`, logIndex: '0x9' })],
  ];
  for (const [name, corrupt] of corruptions) {
    test(`an answer with ${name} is retried, and rejected if it persists`, async () => {
      await withSource(set(), async (source, node) => {
        const fault = {
          type: 'rewrite' as const,
          rewrite: (reply: unknown) => {
            const r = reply as { result: Record<string, unknown>[] };
            return { ...r, result: [...r.result, corrupt(r.result[0]!)] };
          },
        };
        node.injectFaults(fault);
        assert.equal((await source.getTransferLogs(483920, 483920)).length, 2, 'second attempt is clean');
        node.injectFaults(fault, fault);
        await assert.rejects(source.getTransferLogs(483920, 483920), InvalidRpcResponseError);
      });
    });
  }

  test('a result that is not an array is rejected', async () => {
    await withSource(set(), async (source, node) => {
      const fault = { type: 'rewrite' as const, rewrite: (r: unknown) => ({ ...(r as object), result: {} }) };
      node.injectFaults(fault, fault);
      await assert.rejects(source.getTransferLogs(483920, 483920), InvalidRpcResponseError);
    });
  });
});

describe('evm source: headers', () => {
  test('headers come back in the order asked, from one batch', async () => {
    const set = loadEthereumEtlSet('stream_blocks_17173049_17173050');
    await withSource(set, async (source) => {
      const headers = await source.getHeaders([17173050, 17173049]);
      assert.deepEqual(
        headers.map((h) => h.number),
        [17173050, 17173049],
      );
      assert.equal(headers[0]!.parentHash, headers[1]!.hash);
      const raw = set.blocks.find((b) => b.number === '0x1060a3a')!;
      assert.deepEqual(headers[0], {
        number: 17173050,
        hash: raw.hash,
        parentHash: raw.parentHash,
        timestamp: Number.parseInt(raw.timestamp, 16),
      });
    });
  });

  test('a block the node has not got yet is asked again, alone', async () => {
    const sizes: number[] = [];
    const options = {
      ...loadEthereumEtlSet('stream_blocks_17173049_17173050'),
      onRequest: ({ body }: { body: unknown }) => {
        if (Array.isArray(body)) sizes.push(body.length);
      },
    };
    await withSource(options, async (source, node) => {
      // The first answer has block 17173050 as null, as from a node one block behind.
      node.injectFaults({
        type: 'rewrite',
        rewrite: (reply) =>
          (reply as object[]).map((item, i) => (i === 1 ? { ...item, result: null } : item)),
      });
      const headers = await source.getHeaders([17173049, 17173050]);
      assert.deepEqual(
        headers.map((h) => h.number),
        [17173049, 17173050],
      );
      assert.deepEqual(sizes, [2, 1]);
    });
  });

  test('a block that stays missing is a retryable error', async () => {
    await withSource(loadEthereumEtlSet('stream_blocks_17173049_17173050'), async (source, node) => {
      node.setHead(17173049);
      const before = node.calls.get('eth_getBlockByNumber') ?? 0;
      await assert.rejects(
        source.getHeaders([17173049, 17173050]),
        (e: unknown) => e instanceof InvalidRpcResponseError && e.retryable,
      );
      // 2 attempts: both blocks, then only the missing one.
      assert.equal((node.calls.get('eth_getBlockByNumber') ?? 0) - before, 3);
    });
  });

  test('a header for another height than asked is rejected', async () => {
    await withSource(loadEthereumEtlSet('stream_blocks_17173049_17173050'), async (source, node) => {
      const swap = {
        type: 'rewrite' as const,
        rewrite: (reply: unknown) => {
          const [a, b] = reply as { result: unknown }[];
          return [
            { ...a, result: b!.result },
            { ...b, result: a!.result },
          ];
        },
      };
      node.injectFaults(swap, swap);
      await assert.rejects(source.getHeaders([17173049, 17173050]), InvalidRpcResponseError);
    });
  });
});

describe('evm source: token metadata from recorded eth_call answers', () => {
  const sets: [string, () => FixtureSet, string, string][] = [
    [
      'EOS: bytes32 symbol, empty bytes32 name',
      () => loadEthereumEtlSet('export_tokens/eos_0x86fa0498'),
      'ethereum-etl/export_tokens/eos_0x86fa0498/expected_tokens.csv',
      '0x86fa049857e0209aa7d9e616f7eb3b3b78ecfdb0',
    ],
    [
      'a name written "ETH\\0\\0\\0"',
      () => loadEthereumEtlSet('export_tokens/invalid_0xf763be8b'),
      'ethereum-etl/export_tokens/invalid_0xf763be8b/expected_tokens.csv',
      '0xf763be8b3263c268e9789abfb3934564a7b80054',
    ],
    [
      'empty name and symbol, zero decimals',
      () => loadEthereumEtlSet('stream_block_2112234_token_0xdbdacfc9'),
      'ethereum-etl/stream_block_2112234_token_0xdbdacfc9/expected_tokens.json',
      '0xdbdacfc9eb9d42559ac1efbdb40460c728139e6a',
    ],
    [
      'Polygon LINK',
      () => loadPolygonEtlSet('export_tokens_LINK_0xb0897686'),
      'polygon-etl/export_tokens_LINK_0xb0897686/expected_tokens.csv',
      '0xb0897686c545045afc77cf20ec7a532e3120e0f1',
    ],
  ];
  for (const [name, load, expectedFile, address] of sets) {
    test(`${name} reads as ethereum-etl and docs/api.md#evm-token-metadata expect`, async () => {
      const [expected] = loadExpectedTokens(expectedFile);
      await withSource(load(), async (source, node) => {
        const [meta] = await source.readTokenMetadata([address.toUpperCase().replace('0X', '0x')]);
        assert.deepEqual(meta, {
          address,
          name: expected!.name,
          symbol: expected!.symbol,
          decimals: expected!.decimals,
        });
        assert.equal(node.calls.get('eth_call'), 3);
      });
    });
  }

  test('the "ETH\\0\\0\\0" answer really carries NULs, which are trimmed', () => {
    const call = loadEthereumEtlSet('export_tokens/invalid_0xf763be8b').calls.find(
      (c) => c.data === '0x06fdde03',
    )!;
    // ABI string of length 6: "ETH" followed by three NUL bytes.
    assert.match(call.result!, /0{63}6455448000000/);
  });

  test('several tokens are read in one batch, and a contract without the functions reads as empty', async () => {
    const eos = loadEthereumEtlSet('export_tokens/eos_0x86fa0498');
    const link = loadPolygonEtlSet('export_tokens_LINK_0xb0897686');
    let batches = 0;
    await withSource(
      {
        calls: [...eos.calls, ...link.calls],
        onRequest: ({ body }) => {
          if (Array.isArray(body)) batches++;
        },
      },
      async (source) => {
        const tokens = await source.readTokenMetadata([
          '0x86fa049857e0209aa7d9e616f7eb3b3b78ecfdb0',
          '0x1111111111111111111111111111111111111111',
          '0xb0897686c545045afc77cf20ec7a532e3120e0f1',
        ]);
        assert.deepEqual(
          tokens.map((t) => [t.symbol, t.name, t.decimals]),
          [
            ['EOS', '', 18],
            ['', '', 0],
            ['LINK', 'ChainLink Token', 18],
          ],
        );
        assert.equal(batches, 1);
      },
    );
  });
});

describe('evm source: supplies', () => {
  const token = '0x86fa049857e0209aa7d9e616f7eb3b3b78ecfdb0';
  const word = (n: bigint) => `0x${n.toString(16).padStart(64, '0')}`;
  const eos = loadEthereumEtlSet('export_tokens/eos_0x86fa0498');
  const totalSupply = BigInt(eos.calls.find((c) => c.data === calldata.totalSupply())!.result!);
  // Real EOS has no cap(); give it a recorded burn balance at 0x0 only.
  const burned = 123_456_789_000_000_000_000n;
  const calls = [
    ...eos.calls,
    {
      to: token,
      data: calldata.balanceOf('0x0000000000000000000000000000000000000000'),
      result: word(burned),
    },
  ];

  test('total supply, no cap, and the burn-address balances (a reverting balanceOf counts 0)', async () => {
    await withSource({ calls, head: 100 }, async (source, node) => {
      const [supply] = await source.readSupplies([token], 90);
      assert.deepEqual(supply, { address: token, totalSupply, cap: null, burnedBalance: burned });
      assert.equal(totalSupply, 10n ** 27n);
      assert.equal(node.calls.get('eth_call'), 4);
    });
  });

  test('a node without state at the block is read again at latest', async () => {
    await withSource({ calls, head: 100, limits: { oldestStateBlock: 50 } }, async (source, node) => {
      const [supply] = await source.readSupplies([token], 10);
      assert.deepEqual(supply, { address: token, totalSupply, cap: null, burnedBalance: burned });
      assert.equal(node.calls.get('eth_call'), 8);
    });
  });

  test('a node that has not got the block yet is asked again, not read at its older latest', async () => {
    await withSource({ calls, head: 100 }, async (source, node) => {
      await assert.rejects(
        source.readSupplies([token], 101),
        (e: unknown) => e instanceof InvalidRpcResponseError && e.retryable,
      );
      // Two attempts (invalidAttempts: 2) at block 101, never one at latest.
      assert.equal(node.calls.get('eth_call'), 8);
      node.setHead(101);
      const [supply] = await source.readSupplies([token], 101);
      assert.equal(supply?.totalSupply, totalSupply);
    });
  });

  test('metadata read at a block the node has not got yet is asked again, never read as empty', async () => {
    await withSource({ calls, head: 100 }, async (source, node) => {
      await assert.rejects(
        source.readTokenMetadata([token], 101),
        (e: unknown) => e instanceof InvalidRpcResponseError && e.retryable,
      );
      node.setHead(101);
      const [atBlock] = await source.readTokenMetadata([token], 101);
      assert.deepEqual(atBlock, (await source.readTokenMetadata([token]))[0]);
      assert.equal(atBlock?.symbol, 'EOS');
    });
  });

  test('a token whose totalSupply cannot be read has a null supply', async () => {
    await withSource({ calls: [] }, async (source) => {
      const [supply] = await source.readSupplies(['0x2222222222222222222222222222222222222222'], 'latest');
      assert.deepEqual(supply, {
        address: '0x2222222222222222222222222222222222222222',
        totalSupply: null,
        cap: null,
        burnedBalance: 0n,
      });
    });
  });
});

describe('evm source: balances at an old block (starting balances of a late start)', () => {
  const token = '0x86fa049857e0209aa7d9e616f7eb3b3b78ecfdb0';
  const holder = '0x1111111111111111111111111111111111111111';
  const word = (n: bigint) => `0x${n.toString(16).padStart(64, '0')}`;
  const calls = [{ to: token, data: calldata.balanceOf(holder), result: word(42n) }];

  test('a balance reads as its value, a call that reverts as null', async () => {
    await withSource({ calls, head: 100 }, async (source) => {
      const other = '0x2222222222222222222222222222222222222222';
      assert.deepEqual(
        await source.readBalancesAt(
          [
            { token, holder },
            { token, holder: other },
          ],
          60,
          { multicall: false },
        ),
        [42n, null],
      );
    });
  });

  test('a node that dropped the state ("missing trie node") fails with StateUnavailableError after its attempts', async () => {
    await withSource({ calls, head: 100, limits: { oldestStateBlock: 50 } }, async (source, node) => {
      await assert.rejects(
        source.readBalancesAt([{ token, holder }], 10, { multicall: false }),
        (e: unknown) => e instanceof StateUnavailableError,
      );
      assert.equal(node.calls.get('eth_call'), 2);
      // The same node answers where it keeps state.
      assert.deepEqual(await source.readBalancesAt([{ token, holder }], 50, { multicall: false }), [42n]);
    });
  });
});

describe('evm source: chain facts', () => {
  test('chain id and head come from the node', async () => {
    const set = loadEthereumEtlSet('stream_blocks_17173049_17173050');
    await withSource({ ...set, chainId: 137 }, async (source) => {
      assert.equal(await source.chainId(), 137);
      assert.equal(await source.blockNumber(), set.head);
    });
  });
});
