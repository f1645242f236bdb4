import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { silentLogger } from '../../internal/logger.js';
import { MAX_TOKEN_NAME_CHARS, MAX_TOKEN_SYMBOL_CHARS } from '../../internal/token-text.js';
import { createRpcClient } from '../jsonrpc/rpc-client.js';
import {
  InvalidRpcResponseError,
  NeoApplicationLogMissingError,
  NeoMissingOutputError,
  RpcTransportError,
} from './errors.js';
import { createNeoSource } from './source.js';
import { type FakeNeoNode, type FakeNeoNodeOptions, startFakeNeoNode } from './testing/fake-neo-node.js';
import { loadExpectedNep5Transfers, loadNeoscanRecordings } from './testing/recordings.js';
import { RPX_DEPLOY_BLOCK, RPX_HASH, rpxDeployWindow } from './testing/synthetic.js';
import type { NeoSource } from './types.js';
import { externalInputs, outputKey } from './utxo.js';

const recordings = loadNeoscanRecordings();
const NEO = '0xc56f33fc6ecfcd0c225c4ab356fee59390af8560be0e930faebe74a6daff7c9b';
const NEX = '0x3a4acd3647086e7c44398aac0349802e6a171129';
const RPX_CALL = 'c920b2192e74eda4ca6140510813aa40fef1767d00c152aa6f8027c24bdf14f2';

async function withSource(
  options: FakeNeoNodeOptions,
  run: (source: NeoSource, node: FakeNeoNode, requests: unknown[]) => Promise<void>,
  sourceOptions: { blocksPerBatch?: number; invalidAttempts?: number } = {},
) {
  const requests: unknown[] = [];
  const node = await startFakeNeoNode({ ...options, onRequest: ({ body }) => requests.push(body) });
  const logger = silentLogger();
  const rpc = createRpcClient({
    url: node.url,
    logger,
    maxRetries: 3,
    retryBaseMs: 1,
    retryMaxMs: 5,
    timeoutMs: 5_000,
  });
  const source = createNeoSource({ rpc, logger, invalidRetryBaseMs: 1, ...sourceOptions });
  try {
    await run(source, node, requests);
  } finally {
    await node.close();
  }
}

describe('NEO source', () => {
  test('reads a window around block 1444843: batched blocks, one log, the 3 RPX mints', async () => {
    await withSource(rpxDeployWindow(), async (source, node, requests) => {
      assert.equal(await source.getBlockCount(), RPX_DEPLOY_BLOCK + 3);
      const blocks = await source.getBlocks(RPX_DEPLOY_BLOCK - 2, RPX_DEPLOY_BLOCK + 2);
      assert.deepEqual(
        blocks.map((b) => b.index),
        [-2, -1, 0, 1, 2].map((d) => RPX_DEPLOY_BLOCK + d),
      );
      // getblockcount, one batch of 5 blocks, one batch of 1 log.
      assert.equal(requests.length, 3);
      assert.equal(node.calls.get('getblock'), 5);
      assert.equal(node.calls.get('getapplicationlog'), 1);
      const deploy = blocks[2]!;
      const expected = loadExpectedNep5Transfers()[RPX_CALL]!;
      assert.deepEqual(
        deploy.nep5Transfers.map((t) => [t.token, t.from, t.to, t.value.toString(), t.txHash]),
        expected.map((e) => [e.contract, '', e.to_address, e.amount_raw, `0x${RPX_CALL}`]),
      );
      assert.equal(deploy.nep5Transfers[0]!.token, RPX_HASH);
      assert.deepEqual(deploy.deployments, []);
      assert.ok(blocks.every((b, i) => i === 0 || b.previousHash === blocks[i - 1]!.hash));
    });
  });

  test('small batches run concurrently and come back in order', async () => {
    await withSource(
      rpxDeployWindow(RPX_DEPLOY_BLOCK - 6, RPX_DEPLOY_BLOCK + 6),
      async (source, node) => {
        const blocks = await source.getBlocks(RPX_DEPLOY_BLOCK - 6, RPX_DEPLOY_BLOCK + 6);
        assert.deepEqual(
          blocks.map((b) => b.index),
          Array.from({ length: 13 }, (_, i) => RPX_DEPLOY_BLOCK - 6 + i),
        );
        assert.equal(node.calls.get('getblock'), 13);
      },
      { blocksPerBatch: 2 },
    );
  });

  test('a block the node does not have yet is an invalid answer, retried, then reported', async () => {
    await withSource(
      rpxDeployWindow(),
      async (source, node) => {
        await assert.rejects(
          source.getBlocks(RPX_DEPLOY_BLOCK + 2, RPX_DEPLOY_BLOCK + 3),
          /block not available yet/,
        );
        assert.equal(node.calls.get('getblock'), 4);
      },
      { invalidAttempts: 2 },
    );
  });

  test('a node without application logs fails clearly (block 2120069 has 3 unrecorded invocations)', async () => {
    await withSource(recordings, async (source) => {
      await assert.rejects(source.getBlocks(2120069, 2120069), (error: unknown) => {
        assert.ok(error instanceof NeoApplicationLogMissingError);
        assert.equal(error.retryable, false);
        assert.match(error.shortMessage, /ApplicationLogs plugin/);
        return true;
      });
    });
  });

  test('reads the RPX contract state and the NEO asset state; unknown ones are null', async () => {
    await withSource(recordings, async (source) => {
      const rpx = await source.getContractState(RPX_HASH.slice(2).toUpperCase());
      assert.deepEqual(
        [rpx?.hash, rpx?.name, rpx?.author, rpx?.needsStorage],
        [RPX_HASH, 'RPX Sale', 'Red Pulse', true],
      );
      assert.equal(await source.getContractState(`0x${'11'.repeat(20)}`), null);
      const neo = await source.getAssetState(NEO);
      assert.deepEqual(
        [neo?.type, neo?.name, neo?.amount, neo?.precision],
        ['GoverningToken', 'AntShare', 10n ** 16n, 0],
      );
      assert.equal(await source.getAssetState(`0x${'11'.repeat(32)}`), null);
      await assert.rejects(source.getAssetState('NEO'), TypeError);
    });
  });

  test('NEP-5 metadata: recorded NEX answers; an unrecorded totalSupply FAULTs and reads as null', async () => {
    await withSource(recordings, async (source, node) => {
      const invoked = await source.invokeFunction(NEX, 'decimals');
      assert.deepEqual(invoked.stack, [{ type: 'Integer', value: 8n }]);
      const [nex, unknown] = await source.readNep5Metadata([NEX, RPX_HASH]);
      assert.deepEqual(nex, { hash: NEX, name: 'NEX Token', symbol: 'NEX', decimals: 8, totalSupply: null });
      assert.deepEqual(unknown, { hash: RPX_HASH, name: '', symbol: '', decimals: 0, totalSupply: null });
      assert.equal(node.calls.get('invokefunction'), 9);
    });
  });

  test('NEP-5 metadata: a hostile name and symbol are capped and cleaned', async () => {
    const hostile = `0x${'42'.repeat(20)}`;
    const answer = (item: unknown) => ({
      script: '',
      state: 'HALT, BREAK',
      gas_consumed: '1',
      stack: [item],
    });
    const text = (value: string) => ({
      type: 'ByteArray',
      value: Buffer.from(value, 'utf8').toString('hex'),
    });
    const invocations = [
      { method: 'name', result: answer(text(`\u202eEvil${'N'.repeat(100_000)}`)) },
      { method: 'symbol', result: answer({ type: 'String', value: `\u001b[2J\u0000${'S'.repeat(50)}` }) },
      { method: 'decimals', result: answer({ type: 'Integer', value: '8' }) },
    ].map((i) => ({ contract: hostile, params: [], ...i }));
    await withSource(
      { ...recordings, invocations: [...(recordings.invocations ?? []), ...invocations] },
      async (source) => {
        const [token] = await source.readNep5Metadata([hostile]);
        assert.equal(token?.name, `Evil${'N'.repeat(MAX_TOKEN_NAME_CHARS - 4)}`);
        assert.equal(token?.symbol, `[2J${'S'.repeat(MAX_TOKEN_SYMBOL_CHARS - 3)}`);
        assert.equal(token?.decimals, 8);
      },
    );
  });

  test('getrawtransaction: recorded transactions, block transactions, unknown ones', async () => {
    await withSource(recordings, async (source) => {
      const publish = await source.getRawTransaction(
        '0xfd161ccd87deab812daa433cbc0f8f6468de24f1d708187beef5ab9ada7050f3',
      );
      assert.equal(publish?.type, 'PublishTransaction');
      assert.equal(publish?.outputs[0]?.value, 23_856n);
      const call = await source.getRawTransaction(RPX_CALL);
      assert.equal(call?.blockTime, 1507466032);
      assert.equal(await source.getRawTransaction(`0x${'00'.repeat(32)}`), null);
    });
  });

  test('resolveOutputs: the fallback for inputs spent before the start block', async () => {
    await withSource(rpxDeployWindow(), async (source, node) => {
      const [deploy] = await source.getBlocks(RPX_DEPLOY_BLOCK, RPX_DEPLOY_BLOCK);
      const refs = externalInputs([deploy!]);
      const outputs = await source.resolveOutputs(refs);
      assert.equal(outputs.size, 26);
      assert.equal(node.calls.get('getrawtransaction'), 26);
      const rpxInput = outputs.get(outputKey(deploy!.transactions[1]!.inputs[0]!));
      assert.equal(rpxInput?.address, 'AQcxz3gj42aZ74ymenykJuiMKBZqarFX6y');
      assert.equal(rpxInput?.value, 4_000_000_000n);
      // The genesis MinerTransaction has no outputs; an unknown transaction has none either.
      const genesisMiner = '0xfb5bd72b2d6792d75dc2f1084ffa9e9f70ca85543c717a6b13d9959b452a57d6';
      await assert.rejects(source.resolveOutputs([{ txid: genesisMiner, n: 0 }]), NeoMissingOutputError);
    });
    await withSource(recordings, async (source) => {
      await assert.rejects(
        source.resolveOutputs([{ txid: `0x${'00'.repeat(32)}`, n: 0 }]),
        /knows no such transaction/,
      );
    });
  });

  test('transport faults are retried; corrupted answers are retried then refused', async () => {
    await withSource(rpxDeployWindow(), async (source, node) => {
      node.injectFaults({ type: 'status', status: 503 }, { type: 'malformed' }, { type: 'drop' });
      assert.equal((await source.getBlocks(RPX_DEPLOY_BLOCK, RPX_DEPLOY_BLOCK))[0]!.transactions.length, 38);
      // One corrupted answer: the second attempt succeeds.
      node.injectFaults({ type: 'rewrite', rewrite: corruptFirstOutputAddress });
      assert.equal((await source.getBlocks(RPX_DEPLOY_BLOCK, RPX_DEPLOY_BLOCK))[0]!.index, RPX_DEPLOY_BLOCK);
      // Always corrupted: reported after the attempts.
      node.injectFaults(
        ...Array.from({ length: 4 }, () => ({
          type: 'rewrite' as const,
          rewrite: corruptFirstOutputAddress,
        })),
      );
      await assert.rejects(source.getBlocks(RPX_DEPLOY_BLOCK, RPX_DEPLOY_BLOCK), (error: unknown) => {
        assert.ok(error instanceof InvalidRpcResponseError);
        assert.match(error.shortMessage, /tx\[0\]\.vout\[0\]\.address is not a NEO address/);
        return true;
      });
      node.injectFaults(...Array.from({ length: 4 }, () => ({ type: 'status' as const, status: 502 })));
      await assert.rejects(source.getBlockCount(), RpcTransportError);
    });
  });

  test('a broken hash chain between blocks is refused', async () => {
    const window = rpxDeployWindow();
    const blocks = window.blocks!.map((b) =>
      b.index === RPX_DEPLOY_BLOCK + 1 ? { ...b, previousblockhash: `0x${'ee'.repeat(32)}` } : b,
    );
    await withSource(
      { ...window, blocks },
      async (source) => {
        await assert.rejects(
          source.getBlocks(RPX_DEPLOY_BLOCK, RPX_DEPLOY_BLOCK + 1),
          /previousblockhash does not match/,
        );
      },
      { invalidAttempts: 1 },
    );
  });
});

/** Rewrites a batch of getblock answers: the first output of the first block gets a bad checksum. */
function corruptFirstOutputAddress(reply: unknown): unknown {
  const copy = structuredClone(reply) as { result?: { tx: { vout: { address: string }[] }[] } }[];
  const output = copy[0]?.result?.tx[0]?.vout[0];
  if (output !== undefined)
    output.address = `${output.address.slice(0, -1)}${output.address.endsWith('a') ? 'b' : 'a'}`;
  return copy;
}
