/**
 * `--db postgres://…` for every command that opens the store, as real processes: `keys`, `start`,
 * and `index` + `serve` sharing one database, against a real anvil chain.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  apiUrl,
  assertOneLineError,
  type CliProcess,
  eventually,
  getJson,
  lines,
  removeTempDirs,
  runCli,
  spawnCli,
} from '../../cli/testing/cli-process.js';
import { type AnvilInstance, startAnvil } from '../../devchain/anvil.js';
import { getBlockNumber } from '../../devchain/chain.js';
import { type DeployedToken, deployDemoTokens } from '../../devchain/deploy.js';
import { sendTransfers } from '../../devchain/traffic.js';
import { redactUrls } from '../../internal/errors.js';
import {
  checkTestServer,
  createTestDatabase,
  querySql,
  type TestDatabase,
  withSchema,
} from './testing/test-database.js';

let database: TestDatabase;
let anvil: AnvilInstance;
let tokens: DeployedToken[];
let head: number;
const children: CliProcess[] = [];
let schemas = 0;

before(async () => {
  await checkTestServer();
  database = await createTestDatabase();
  anvil = await startAnvil();
  tokens = await deployDemoTokens(anvil.url);
  await sendTransfers(anvil.url, tokens, { count: 12, seed: 11 });
  head = await getBlockNumber(anvil.url);
});

after(async () => {
  await Promise.all(children.map((child) => child.stop('SIGKILL')));
  await anvil?.stop();
  await database?.drop();
  removeTempDirs();
});

/** A connection string for a fresh schema of this file's database. */
async function freshDb(): Promise<string> {
  const schema = `cli_${++schemas}`;
  await querySql(database.url, `CREATE SCHEMA ${schema}`);
  return withSchema(database.url, schema);
}

function spawn(args: string[], env: Record<string, string> = {}): CliProcess {
  const child = spawnCli(args, { env });
  children.push(child);
  return child;
}

async function createKey(db: string): Promise<{ key: string; id: string }> {
  const result = await runCli(['keys', 'create', '--label', 'pg', '--db', db]);
  assert.equal(result.code, 0, result.stderr);
  return { key: lines(result.stdout).at(-1)!, id: /Created API key ([\w-]+)/.exec(result.stdout)![1]! };
}

/** Token Info of every deployed token, polled until indexed, checked against the deployment. */
async function allTokensServed(base: string, key: string): Promise<void> {
  for (const token of tokens) {
    const body = await eventually(
      async () => {
        const answer = await getJson(`${base}/vipapi/eth/token/${token.address}?apikey=${key}`);
        return answer.body.code === 1 ? answer.body : undefined;
      },
      20_000,
      `Token Info code 1 for ${token.address}`,
    );
    const data = body.data as { tokenHash: string; tokenInfo: { s: string; d: string } };
    assert.equal(data.tokenHash, token.address);
    assert.equal(data.tokenInfo.s, token.symbol);
    assert.equal(data.tokenInfo.d, String(token.decimals));
  }
}

async function indexedUpTo(base: string, block: number): Promise<void> {
  await eventually(
    async () => {
      const { body } = await getJson(`${base}/status`);
      const eth = (body.chains as Record<string, { indexed: number }> | undefined)?.eth;
      return eth && eth.indexed >= block ? true : undefined;
    },
    20_000,
    `eth indexed up to ${block}`,
  );
}

describe('the CLI on PostgreSQL', () => {
  test('keys create, list and revoke', async () => {
    const db = await freshDb();
    const created = await runCli(['keys', 'create', '--label', 'pg', '--db', db]);
    assert.equal(created.code, 0, created.stderr);
    // Named without the password or the connection parameters.
    const where = redactUrls(db);
    assert.ok(!where.includes('@') && !where.includes('?'), where);
    assert.deepEqual(lines(created.stderr), [`tokenquery: created a new store at ${where}`]);
    assert.match(created.stdout, /^Created API key \S+ \(pg\) in postgres:\/\/[^\s@?]+\./);
    const key = lines(created.stdout).at(-1)!;
    const id = /Created API key ([\w-]+)/.exec(created.stdout)![1]!;
    const list = await runCli(['keys', 'list', '--db', db]);
    assert.equal(list.code, 0, list.stderr);
    const [header, row] = lines(list.stdout);
    assert.match(header!, /^ID\tSTATUS/);
    assert.match(row!, new RegExp(`^${id}\\tactive\\t.*\\tpg$`));
    const revoke = await runCli(['keys', 'revoke', key, '--db', db]);
    assert.equal(revoke.code, 0, revoke.stderr);
    assert.match(lines((await runCli(['keys', 'list', '--db', db])).stdout)[1]!, /\trevoked /);
  });

  test('serve refuses a database without a tokenquery store, in one line, and creates nothing', async () => {
    const db = await freshDb();
    const result = await runCli(['serve', '--db', db, '--port', '0']);
    assertOneLineError(
      result,
      /^tokenquery: no store at postgres:\/\/[^\s@?]+: create it with `tokenquery index`/,
    );
    const [row] = await querySql<{ table: string | null }>(db, 'SELECT to_regclass($1) AS "table"', [
      'tokenquery_migrations',
    ]);
    assert.equal(row?.table, null, 'serve created the schema');
  });

  test('start indexes the chain into PostgreSQL and serves it', async () => {
    const db = await freshDb();
    const cli = spawn([
      'start',
      '--rpc',
      `eth=${anvil.url}`,
      '--db',
      db,
      '--port',
      '0',
      '--poll-interval',
      '100',
    ]);
    const base = await apiUrl(cli, 'tokenquery started');
    const { key } = await createKey(db);
    await allTokensServed(base, key);
    await indexedUpTo(base, head);
    const result = await cli.stop('SIGTERM');
    assert.equal(result.code, 0, result.stderr);
  });

  test('index and serve share one database; a key revoked there is refused by serve', async () => {
    const db = await freshDb();
    const env = { TOKENQUERY_RPC: `eth=${anvil.url}`, TOKENQUERY_DB: db, TOKENQUERY_POLL_INTERVAL_MS: '100' };
    // `keys create` creates the store, which `serve` refuses to do.
    const { key, id } = await createKey(db);
    const indexer = spawn(['index'], env);
    const server = spawn(['serve', '--port', '0'], env);
    const base = await apiUrl(server, 'tokenquery serving');
    await allTokensServed(base, key);

    await sendTransfers(anvil.url, tokens, { count: 2, seed: 12 });
    await indexedUpTo(base, await getBlockNumber(anvil.url));

    const revoke = await runCli(['keys', 'revoke', id, '--db', db]);
    assert.equal(revoke.code, 0, revoke.stderr);
    const url = `${base}/vipapi/eth/tokens/1/10?apikey=${key}`;
    await eventually(async () => ((await getJson(url)).status === 401 ? true : undefined), 3000, 'a 401', 50);

    const [served, indexed] = await Promise.all([server.stop('SIGTERM'), indexer.stop('SIGTERM')]);
    assert.equal(served.code, 0, served.stderr);
    assert.equal(indexed.code, 0, indexed.stderr);
  });
});
