/**
 * Tokens whose `balanceOf` moves without a log per holder (contracts/NotExactTokens.sol: rebasing,
 * shares, reflection, fee burning), indexed from a real anvil node (docs/reliability.md, "Exact
 * balances"). `verify` with the node must name every one: the summed balances against
 * `totalSupply()` (rebasing, shares, fee burning) and the sampled `balanceOf` (all four; a
 * reflection token's logs keep the sum equal to its supply, so only the sample shows it). The
 * exactness check that follows the head marks all four: the three whose sum drifts with their
 * drift, and the reflection token by the sample of its largest holders, which it reads even when
 * the sum matches.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createEvmSource } from '../chains/evm/source.js';
import { createRpcClient } from '../chains/jsonrpc/rpc-client.js';
import { type AbiArg, encodeArgs, encodeCall } from '../devchain/abi.js';
import { startAnvil } from '../devchain/anvil.js';
import { getAccounts, getBlockNumber, sendTransaction, waitForReceipt } from '../devchain/chain.js';
import {
  type CompiledContract,
  FeeBurnToken,
  RebasingToken,
  ReflectionToken,
  SharesToken,
} from '../devchain/contracts.generated.js';
import { selector } from '../devchain/deploy.js';
import { silentLogger } from '../internal/logger.js';
import { waitFor } from '../internal/testing/wait.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { createEvmIndexer } from './evm-indexer.js';
import { verifyChain } from './verify.js';

const tmp = mkdtempSync(join(tmpdir(), 'tq-not-exact-'));
const logger = silentLogger();
after(() => rmSync(tmp, { recursive: true, force: true }));

describe('tokens that move balances without a log per holder', () => {
  test('verify with the node names every one; the exactness check marks every one', async () => {
    const anvil = await startAnvil({ accounts: 6 });
    const store = await openSqliteStore({ path: join(tmp, 'not-exact.sqlite'), logger });
    const controller = new AbortController();
    let running: Promise<void> | undefined;
    try {
      const url = anvil.url;
      const [owner, ...users] = await getAccounts(url);
      const send = async (to: string, data: string) =>
        waitForReceipt(url, await sendTransaction(url, { from: owner!, to, data, gas: 300_000 }));
      const deploy = async (contract: CompiledContract, args: AbiArg[] = []) =>
        (
          await waitForReceipt(
            url,
            await sendTransaction(url, {
              from: owner!,
              data: contract.bytecode + encodeArgs(args),
              gas: 3_000_000,
            }),
          )
        ).contractAddress!;
      const supply: AbiArg = { type: 'uint256', value: 10n ** 24n };
      const tokens = {
        rebasing: await deploy(RebasingToken, [supply]),
        shares: await deploy(SharesToken, [supply]),
        reflection: await deploy(ReflectionToken),
        feeBurn: await deploy(FeeBurnToken, [supply]),
      };
      const contracts = {
        rebasing: RebasingToken,
        shares: SharesToken,
        reflection: ReflectionToken,
        feeBurn: FeeBurnToken,
      };
      for (const [kind, token] of Object.entries(tokens)) {
        const contract = contracts[kind as keyof typeof contracts];
        for (const [i, user] of users.entries()) {
          await send(
            token,
            encodeCall(selector('transfer(address,uint256)', contract), [
              { type: 'address', value: user },
              { type: 'uint256', value: BigInt(i + 1) * 10n ** 21n },
            ]),
          );
        }
      }
      // What no log records: a rebase, accrued rewards (the transfers did the rest).
      await send(
        tokens.rebasing,
        encodeCall(selector('rebase(uint256)', RebasingToken), [{ type: 'uint256', value: 3n * 10n ** 24n }]),
      );
      await send(
        tokens.shares,
        encodeCall(selector('accrue(uint256)', SharesToken), [{ type: 'uint256', value: 10n ** 23n }]),
      );

      running = createEvmIndexer({
        chain: { name: 'eth', rpcUrl: url, fromBlock: 0, finalityDepth: 2, pollIntervalMs: 20 },
        source: createEvmSource({ rpc: createRpcClient({ url, logger, retryBaseMs: 5 }), logger }),
        store: store.writer,
        logger,
        signal: controller.signal,
        tty: false,
        supplyRefreshBlocks: 1,
      }).run();
      const head = await getBlockNumber(url);
      await waitFor(
        'the indexer to reach the head',
        async () => (await store.writer.getCheckpoint('eth'))?.block === head,
      );

      const report = await verifyChain({
        store,
        chain: 'eth',
        source: createEvmSource({ rpc: createRpcClient({ url, logger }), logger }),
        logger,
        sample: 10,
      });
      // The index agrees with itself: only the node tells these tokens apart.
      const fromNode = new Set(report.differences.map((d) => `${d.token}:${d.kind}`));
      for (const d of report.differences)
        assert.equal(d.kind, 'node', `a ${d.kind} difference in ${d.token}`);
      for (const [kind, token] of Object.entries(tokens)) {
        assert.ok(fromNode.has(`${token}:node`), `${kind}: sampled balanceOf differ`);
      }
      assert.deepEqual(
        report.supplyDrift.map((d) => d.token).sort(),
        [tokens.rebasing, tokens.shares, tokens.feeBurn].sort(),
        'summed balances against totalSupply(): all but the reflection token, whose logs keep the sum',
      );

      // The exactness check that follows the head marks the same three, with how far off each is
      // (the drift verify reports), and the reflection token, whose sum equals its supply, by the
      // sample of its largest holders alone.
      const drifted = [tokens.rebasing, tokens.shares, tokens.feeBurn];
      await waitFor('the exactness check to mark the drifted tokens', async () =>
        (await Promise.all(drifted.map((t) => store.reader.getNotExact('eth', t)))).every((m) => m !== null),
      );
      for (const token of drifted) {
        const mark = (await store.reader.getNotExact('eth', token))!;
        const drift = report.supplyDrift.find((d) => d.token === token)!;
        assert.equal(mark.supplyDrift, drift.summed - drift.totalSupply, `${token}: the drift`);
        assert.equal(mark.atBlock, head);
        assert.ok(
          mark.differing >= 1 && mark.differing <= mark.sampled,
          `${token}: ${JSON.stringify(mark, (_, v) => (typeof v === 'bigint' ? v.toString() : v))}`,
        );
        assert.ok(mark.sampled >= 3, `${token}: the largest holders and random others sampled`);
      }
      await waitFor(
        'the exactness check to mark the reflection token',
        async () => (await store.reader.getNotExact('eth', tokens.reflection)) !== null,
      );
      const reflection = (await store.reader.getNotExact('eth', tokens.reflection))!;
      assert.equal(reflection.supplyDrift, 0n, 'its logs keep the sum');
      assert.ok(reflection.differing >= 1 && reflection.sampled <= 3, 'the largest holders differ');
      assert.deepEqual(await store.reader.countNotExact(), { eth: 4 });
      // verify names the marked tokens from their marks (without the node too).
      const named = await verifyChain({ store, chain: 'eth', source: null, logger });
      assert.deepEqual(named.notExact.map((n) => n.token).sort(), [...drifted, tokens.reflection].sort());
      for (const { token, mark } of named.notExact)
        assert.deepEqual(mark, await store.reader.getNotExact('eth', token));
    } finally {
      controller.abort();
      await running?.catch(() => {});
      await store.close();
      await anvil.stop();
    }
  });
});
