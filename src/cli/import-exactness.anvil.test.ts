/**
 * `tokenquery import --rpc` and tokens whose balances move without a `Transfer` log (issue #18):
 * an export holds `Transfer` rows only, so WETH9's deposits and withdrawals and the Tether-style
 * token's issues and redeems are missing from what it imports. The import ends with the indexer's
 * exactness check on the tokens it read supplies of, and marks those tokens not exact; a token
 * whose every change is a `Transfer` (the vault: a `Deposit` logged beside a `Transfer` mint)
 * stays exact. Against a real anvil node, the real contracts' bytecode and the real CLI.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { TRANSFER_TOPIC } from '../chains/evm/abi.js';
import { type AnvilInstance, startAnvil } from '../devchain/anvil.js';
import { getBlockNumber, mine } from '../devchain/chain.js';
import { rpc, toQuantity } from '../devchain/rpc.js';
import { deployExactContracts, exactTraffic } from '../indexer/testing/exact-traffic.js';
import { silentLogger } from '../internal/logger.js';
import { openStore } from '../store/open.js';
import { removeTempDirs, runCli, tempDir } from './testing/cli-process.js';

interface RawLog {
  address: string;
  topics: string[];
  data: string;
  transactionHash: string;
  logIndex: string;
  blockNumber: string;
}

/** The node's `Transfer` logs of `0..head` as an ethereum-etl `token_transfers` CSV. */
async function transferExport(url: string, head: number): Promise<string> {
  const logs = await rpc<RawLog[]>(url, 'eth_getLogs', [
    { fromBlock: '0x0', toBlock: toQuantity(head), topics: [TRANSFER_TOPIC] },
  ]);
  const address = (topic: string) => `0x${topic.slice(26)}`;
  const rows = logs.map((log) =>
    [
      log.address.toLowerCase(),
      address(log.topics[1]!),
      address(log.topics[2]!),
      BigInt(log.data).toString(),
      log.transactionHash,
      Number(log.logIndex),
      Number(log.blockNumber),
    ].join(','),
  );
  return `token_address,from_address,to_address,value,transaction_hash,log_index,block_number\n${rows.join('\n')}\n`;
}

let anvil: AnvilInstance;
before(async () => {
  anvil = await startAnvil();
});
after(async () => {
  await anvil?.stop();
  removeTempDirs();
});

test('import --rpc marks the tokens whose balances its Transfer rows cannot explain, and only those', async () => {
  const contracts = await deployExactContracts(anvil.url);
  const traffic = exactTraffic(anvil.url, contracts);
  await traffic.run(60, 18, 3);
  await mine(anvil.url, 4);
  const head = await getBlockNumber(anvil.url);

  const dir = tempDir('tq-import-exactness-');
  const file = join(dir, 'token_transfers.csv');
  writeFileSync(file, await transferExport(anvil.url, head));
  const db = join(dir, 'eth.sqlite');
  const result = await runCli(
    ['import', file, '--db', db, '--rpc', `eth=${anvil.url}`, '--finality', '2', '--to-block', String(head)],
    { timeoutMs: 60_000 },
  );
  assert.equal(result.code, 0, result.stderr);

  const store = await openStore({ location: db, logger: silentLogger() });
  try {
    const weth = await store.reader.getNotExact('eth', contracts.weth);
    const tether = await store.reader.getNotExact('eth', contracts.tether);
    assert.ok(weth !== null, 'WETH9, imported without its deposits and withdrawals, is marked');
    assert.ok(tether !== null, 'the Tether-style token, imported without Issue and Redeem, is marked');
    for (const mark of [weth, tether]) {
      assert.equal(mark.atBlock, head);
      assert.notEqual(mark.supplyDrift, 0n);
      assert.ok(mark.differing > 0 && mark.differing <= mark.sampled);
    }
    // The deposits WETH9 lacks are what its summed balances miss: its Transfer rows only move them.
    const wethSupply = BigInt(
      await rpc<string>(anvil.url, 'eth_call', [
        { to: contracts.weth, data: '0x18160ddd' },
        toQuantity(head),
      ]),
    );
    assert.equal(weth.supplyDrift, -wethSupply);
    assert.equal(
      await store.reader.getNotExact('eth', contracts.vault),
      null,
      'the vault logs a Transfer for every change: exact',
    );
    assert.deepEqual(await store.reader.countNotExact(), { eth: 2 });
  } finally {
    await store.close();
  }
  assert.match(
    result.stdout,
    /^2 tokens marked not exact: balanceOf differs from their imported Transfer rows/m,
  );
});
