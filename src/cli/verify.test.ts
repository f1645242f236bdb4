/**
 * `tokenquery verify` through the real binary, on a store the real indexer filled from a real
 * local anvil chain; then the same store with one thing broken at a time.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { createEvmSource } from '../chains/evm/source.js';
import { createRpcClient } from '../chains/jsonrpc/rpc-client.js';
import { type AnvilInstance, startAnvil } from '../devchain/anvil.js';
import { getBlockNumber } from '../devchain/chain.js';
import { type DeployedToken, deployDemoTokens, mintToken } from '../devchain/deploy.js';
import { sendTransfers } from '../devchain/traffic.js';
import { createEvmIndexer } from '../indexer/evm-indexer.js';
import { ZERO_ADDRESS } from '../internal/chains.js';
import { silentLogger } from '../internal/logger.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { indexBatch, transferRecord } from '../store/testing/batches.js';
import { lines, removeTempDirs, runCli, tempDir } from './testing/cli-process.js';

const logger = silentLogger();
let anvil: AnvilInstance;
let tokens: DeployedToken[];
let dir: string;

/** Indexes the whole chain into `path` with the real indexer, then stops. */
async function indexAll(url: string, path: string): Promise<void> {
  const store = await openSqliteStore({ path, logger });
  const controller = new AbortController();
  const head = await getBlockNumber(url);
  const running = createEvmIndexer({
    chain: { name: 'eth', rpcUrl: url, fromBlock: 0, finalityDepth: 0, pollIntervalMs: 20 },
    source: createEvmSource({ rpc: createRpcClient({ url, logger }), logger }),
    store: store.writer,
    logger,
    signal: controller.signal,
    tty: false,
  }).run();
  const deadline = Date.now() + 30_000;
  while ((await store.writer.getCheckpoint('eth'))?.block !== head) {
    if (Date.now() > deadline) throw new Error('the indexer did not reach the head');
    await new Promise((r) => setTimeout(r, 25));
  }
  controller.abort();
  await running;
  await store.close();
}

/** A copy of the clean store, broken by `sql`. */
async function broken(name: string, sql: string): Promise<string> {
  const path = join(dir, `${name}.sqlite`);
  const clean = new Database(join(dir, 'clean.sqlite'));
  await clean.backup(path);
  clean.close();
  const db = new Database(path);
  db.exec(sql);
  db.close();
  return path;
}

before(async () => {
  anvil = await startAnvil();
  tokens = await deployDemoTokens(anvil.url);
  await sendTransfers(anvil.url, tokens, { count: 30, seed: 3 });
  dir = tempDir('tokenquery-verify-');
  await indexAll(anvil.url, join(dir, 'clean.sqlite'));
  // Moves after the indexed block: verify compares with the node AT the indexed block, so
  // these must not show up as differences.
  await mintToken(anvil.url, tokens[0]!, {
    to: '0x00000000000000000000000000000000000000aa',
    amount: 10n ** 20n,
  });
});
after(async () => {
  await anvil?.stop();
  removeTempDirs();
});

describe('tokenquery verify', () => {
  test('a store the indexer wrote has no differences, with the node sampled at the indexed block', async () => {
    const result = await runCli([
      'verify',
      '--db',
      join(dir, 'clean.sqlite'),
      '--rpc',
      `eth=${anvil.url}`,
      '--sample',
      '5',
      '--json',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(lines(result.stdout).at(-1)!) as {
      tokens: number;
      transfers: number;
      holdings: number;
      holders: number;
      addressLists: number;
      nodeChecks: number;
      differences: unknown[];
    };
    assert.equal(report.tokens, tokens.length);
    // The address and holder views were checked too: every holding row, every holder, and the
    // transfer lists of a sample of addresses per token (at least the top holder and the zero address).
    assert.ok(report.holdings > report.holders, `holdings: ${report.holdings}, holders: ${report.holders}`);
    assert.ok(report.holders >= tokens.length, `holders: ${report.holders}`);
    assert.ok(report.addressLists >= 2 * tokens.length, `address lists: ${report.addressLists}`);
    assert.ok(report.transfers >= 30 + tokens.length, `transfers: ${report.transfers}`);
    assert.ok(report.nodeChecks >= tokens.length, `node checks: ${report.nodeChecks}`);
    assert.deepEqual(report.differences, []);
  });

  test('a token marked not exact is named with its mark, and is no difference (exit 0)', async () => {
    const path = await broken(
      'marked',
      `UPDATE tokens SET not_exact_block = 5, not_exact_drift = '-42', not_exact_sampled = 6,
         not_exact_differing = 2 WHERE id = 1;`,
    );
    const result = await runCli(['verify', '--db', path]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /^0x[0-9a-f]{40} marked not exact at block 5: summed balances minus totalSupply\(\) -42, 2 of 6 sampled balances differ from balanceOf$/m,
    );
    assert.equal(lines(result.stdout).at(-1), 'no differences');
  });

  test('a wrong balance, holder count or transfer count is reported, exit 1', async () => {
    const path = await broken(
      'counts',
      `UPDATE balances SET amount = 12345
         WHERE (token_id, holder) = (SELECT token_id, holder FROM balances WHERE amount > 0 LIMIT 1);
       UPDATE tokens SET holder_count = holder_count + 1, transfer_count = transfer_count + 2 WHERE id = 1;`,
    );
    const result = await runCli(['verify', '--db', path]);
    assert.equal(result.code, 1, result.stderr);
    const out = result.stdout;
    assert.match(out, /holderCount: stored \d+, recomputed \d+/);
    assert.match(out, /transferCount: stored \d+, recomputed \d+/);
    assert.match(out, /balance of 0x[0-9a-f]{40}: stored 12345, recomputed -?\d+/);
    assert.match(lines(out).at(-1)!, /^\d+ differences$/);
  });

  test('a stale running sum of the balances is reported alone, exit 1', async () => {
    const path = await broken('stale-sum', 'UPDATE tokens SET balance_sum = 7 WHERE id = 2;');
    const result = await runCli(['verify', '--db', path]);
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stdout, /^0x[0-9a-f]{40} balanceSum: stored 7, summed balances -?\d+$/m);
    assert.equal(lines(result.stdout).at(-1), '1 differences');
  });

  test('a lost transfer shows as a count and balance difference; the node disagrees too', async () => {
    const path = await broken(
      'lost',
      // The newest transfer of the first token disappears, its effects stay.
      `DELETE FROM transfers WHERE (token_id, block_number, log_index) =
         (SELECT token_id, block_number, log_index FROM transfers WHERE token_id = 1
          ORDER BY block_number DESC, log_index DESC LIMIT 1);`,
    );
    const result = await runCli(['verify', '--db', path, '--rpc', `eth=${anvil.url}`]);
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stdout, /transferCount: stored \d+, recomputed \d+/);
    assert.match(result.stdout, /balance of 0x[0-9a-f]{40}: stored -?\d+, recomputed -?\d+/);
  });

  test('a wrong per-address transfer count, a lost holding row and a wrong holder order are reported, exit 1', async () => {
    // Token 2: one holder's transfer count is off by 3. Token 3: a holder's row is gone (its
    // balance, its holding, its place among the holders). Token 4: the smallest holder's rank key
    // (balances.rank, the holder list's sort key) says 10^30 while its balance stays right, so it
    // leads the holder list: a fault of the order alone.
    const holder = (token: number, order: string) =>
      `(SELECT token_id, holder FROM balances WHERE token_id = ${token} AND rank IS NOT NULL ORDER BY ${order} LIMIT 1)`;
    const path = await broken(
      'views',
      `UPDATE balances SET transfer_count = transfer_count + 3 WHERE (token_id, holder) = ${holder(2, 'holder')};
       DELETE FROM balances WHERE (token_id, holder) = ${holder(3, 'holder')};
       UPDATE balances SET rank = x'0d${(10n ** 30n).toString(16).padStart(26, '0')}'
         WHERE (token_id, holder) = ${holder(4, 'rank ASC')};`,
    );
    const result = await runCli(['verify', '--db', path]);
    assert.equal(result.code, 1, result.stderr);
    const out = result.stdout;
    const counts =
      /holding of 0x[0-9a-f]{40}: stored \d+ \((\d+) transfers\), recomputed \d+ \((\d+) transfers\)/.exec(
        out,
      );
    assert.ok(counts, out);
    assert.equal(Number(counts[1]) - Number(counts[2]), 3);
    const lost = /holding of (0x[0-9a-f]{40}): stored no row, recomputed (\d+) \(\d+ transfers\)/.exec(out);
    assert.ok(lost, out);
    assert.match(out, new RegExp(`balance of ${lost[1]}: stored 0, recomputed ${lost[2]}`));
    assert.match(out, /holders in order: stored (\d+), recomputed \d+/);
    const order = /holder #1: stored (0x[0-9a-f]{40}) \d+, recomputed (0x[0-9a-f]{40}) \d+/.exec(out);
    assert.ok(order, out);
    assert.notEqual(order[1], order[2]);
    // The reordered holder's balance is right: only the lost row's balance differs.
    assert.equal([...out.matchAll(/ balance of /g)].length, 1, out);
    assert.match(lines(out).at(-1)!, /^\d+ differences$/);
  });

  test("a lost or phantom entry of an address's transfer list is reported, exit 1", async () => {
    // The top holder of token 1 loses its newest entry; the zero address (always sampled) gains one
    // of a transfer that does not name it.
    const top = `(SELECT holder FROM balances WHERE token_id = 1 AND rank IS NOT NULL ORDER BY rank DESC, holder LIMIT 1)`;
    const path = await broken(
      'address-lists',
      `DELETE FROM address_transfers WHERE (address_id, token_id, block_number, log_index) = (
         SELECT t.address_id, t.token_id, t.block_number, t.log_index FROM address_transfers t
           JOIN addresses a ON a.id = t.address_id
           WHERE t.token_id = 1 AND a.address = ${top}
           ORDER BY t.block_number DESC, t.log_index DESC LIMIT 1);
       INSERT INTO address_transfers (address_id, token_id, block_number, log_index)
         SELECT a.id, t.token_id, t.block_number, t.log_index FROM transfers t, addresses a
           WHERE t.token_id = 2 AND a.address = x'${'00'.repeat(20)}'
             AND t.from_addr <> a.address AND t.to_addr <> a.address
           ORDER BY t.block_number DESC, t.log_index DESC LIMIT 1;`,
    );
    const result = await runCli(['verify', '--db', path]);
    assert.equal(result.code, 1, result.stderr);
    const found = [
      ...result.stdout.matchAll(
        /transfers of (0x[0-9a-f]{40}), #(\d+) newest first: stored (.*), recomputed (.*)$/gm,
      ),
    ];
    assert.equal(found.length, 2, result.stdout);
    // Lost: the list goes on with what came after it. Phantom: the zero address's newest entry.
    assert.ok(
      found.some((m) => m[1] !== ZERO_ADDRESS && m[2] === '1'),
      result.stdout,
    );
    assert.ok(
      found.some((m) => m[1] === ZERO_ADDRESS && m[2] === '1'),
      result.stdout,
    );
  });

  test('balances written behind the checkpoint are compared as of the block the table holds', async () => {
    const path = join(dir, 'lagging.sqlite');
    const clean = new Database(join(dir, 'clean.sqlite'));
    await clean.backup(path);
    clean.close();
    // A backfill batch that leaves its balance rows for later, as the indexer's do, while the
    // store that holds them stays open.
    const store = await openSqliteStore({ path, logger });
    const block = (await store.writer.getCheckpoint('eth'))!.block + 1;
    const holder = '0x00000000000000000000000000000000000000bb';
    const other = '0x00000000000000000000000000000000000000cc';
    const transfer = { token: tokens[0]!.address, blockNumber: block, txIndex: 0, time: 1_700_000_000 };
    await store.writer.applyBatch(
      indexBatch({
        fromBlock: block,
        toBlock: block,
        transfers: [
          transferRecord({
            ...transfer,
            txHash: `0x${'a1'.repeat(32)}`,
            from: ZERO_ADDRESS,
            to: holder,
            value: 7n,
          }),
          transferRecord({
            ...transfer,
            logIndex: 1,
            txHash: `0x${'a2'.repeat(32)}`,
            from: holder,
            to: other,
            value: 3n,
          }),
        ],
        pruneBlocksBelow: block,
        deferBalances: true,
      }),
    );
    try {
      const lagging = await runCli(['verify', '--db', path]);
      assert.equal(lagging.code, 0, lagging.stdout + lagging.stderr);
      assert.match(lagging.stdout, new RegExp(`stored balances are those at block ${block - 1}`));
      assert.equal(lines(lagging.stdout).at(-1), 'no differences');
    } finally {
      await store.close(); // writes them
    }
    const written = await runCli(['verify', '--db', path]);
    assert.equal(written.code, 0, written.stdout + written.stderr);
    assert.doesNotMatch(written.stdout, /stored balances are those at block/);
    assert.equal(lines(written.stdout).at(-1), 'no differences');
  });

  test('usage errors are one line, exit 2', async () => {
    const result = await runCli(['verify', '--db', join(dir, 'clean.sqlite'), '--chain', 'neo']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /not an EVM chain/);
    const sample = await runCli(['verify', '--db', join(dir, 'clean.sqlite'), '--address-sample', 'all']);
    assert.equal(sample.code, 2);
    assert.match(sample.stderr, /--address-sample must be a whole number/);
  });
});
