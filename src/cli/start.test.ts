/**
 * `tokenquery start`, `index` and `serve` as real processes against a real anvil chain: the API
 * answers what the indexer wrote, keys made and revoked while the server runs take effect, and
 * SIGTERM ends the process cleanly.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type AnvilInstance, startAnvil } from '../devchain/anvil.js';
import { getBlockNumber } from '../devchain/chain.js';
import { type DeployedToken, deployDemoTokens } from '../devchain/deploy.js';
import { sendTransfers } from '../devchain/traffic.js';
import {
  apiUrl,
  type CliProcess,
  eventually,
  freePort,
  getJson,
  lines,
  logLines,
  removeTempDirs,
  runCli,
  spawnCli,
  tempDir,
} from './testing/cli-process.js';

let anvil: AnvilInstance;
let tokens: DeployedToken[];
let head: number;
const children: CliProcess[] = [];

before(async () => {
  anvil = await startAnvil();
  tokens = await deployDemoTokens(anvil.url);
  await sendTransfers(anvil.url, tokens, { count: 12, seed: 7 });
  head = await getBlockNumber(anvil.url);
});

after(async () => {
  await Promise.all(children.map((child) => child.stop('SIGKILL')));
  await anvil?.stop();
  removeTempDirs();
});

function spawn(args: string[], env: Record<string, string> = {}): CliProcess {
  const child = spawnCli(args, { env });
  children.push(child);
  return child;
}

async function createKey(db: string): Promise<{ key: string; id: string }> {
  const result = await runCli(['keys', 'create', '--label', 'e2e', '--db', db]);
  assert.equal(result.code, 0, result.stderr);
  return { key: lines(result.stdout).at(-1)!, id: /Created API key ([\w-]+)/.exec(result.stdout)![1]! };
}

/** Token Info, polled until it answers code 1; then checked against what was deployed. */
async function tokenInfoOnceIndexed(base: string, key: string, token: DeployedToken): Promise<void> {
  const body = await eventually(
    async () => {
      const answer = await getJson(`${base}/vipapi/eth/token/${token.address}?apikey=${key}`);
      return answer.body.code === 1 ? answer.body : undefined;
    },
    15_000,
    `Token Info code 1 for ${token.address}`,
  );
  const data = body.data as { tokenHash: string; tokenInfo: { f: string; s: string; d: string } };
  assert.equal(data.tokenHash, token.address);
  assert.equal(data.tokenInfo.s, token.symbol);
  assert.equal(data.tokenInfo.f, token.name);
  assert.equal(data.tokenInfo.d, String(token.decimals));
}

interface ChainStatus {
  head: number;
  indexed: number;
}

async function ethStatus(base: string): Promise<ChainStatus | undefined> {
  const { status, body } = await getJson(`${base}/status`);
  assert.equal(status, 200);
  return (body.chains as Record<string, ChainStatus> | undefined)?.eth;
}

/** Waits until `/status` shows eth indexed up to at least `block`. */
async function indexedUpTo(base: string, block: number): Promise<ChainStatus> {
  return eventually(
    async () => {
      const eth = await ethStatus(base);
      return eth && eth.indexed >= block ? eth : undefined;
    },
    15_000,
    `eth indexed up to ${block}`,
  );
}

describe('start: indexers and API in one process', () => {
  let cli: CliProcess;
  let base: string;
  let db: string;
  /** The RPC URL carries credentials that must never appear in any output. */
  const secret = 'sup3r-secret';

  before(async () => {
    db = join(tempDir(), 'start.sqlite');
    const rpc = anvil.url.replace('http://', `http://operator:${secret}@`);
    cli = spawn(['start', '--rpc', `eth=${rpc}`, '--db', db, '--port', '0', '--poll-interval', '100']);
    base = await apiUrl(cli, 'tokenquery started');
    assert.match(base, /^http:\/\/127\.0\.0\.1:\d+$/);
  });

  test('/healthz answers 200', async () => {
    const answer = await getJson(`${base}/healthz`);
    assert.equal(answer.status, 200, answer.text);
  });

  test('/status reports the node head and the indexed block for eth', async () => {
    const eth = await indexedUpTo(base, head);
    assert.ok(eth.head >= head, `head ${eth.head} < ${head}`);
    assert.ok(eth.indexed <= eth.head, JSON.stringify(eth));
  });

  test('a key created while the server runs works, and a revoked key is refused within one second', async () => {
    const { key, id } = await createKey(db);
    await tokenInfoOnceIndexed(base, key, tokens[0]!);

    const revoke = await runCli(['keys', 'revoke', id, '--db', db]);
    assert.equal(revoke.code, 0, revoke.stderr);
    const revokedAt = Date.now();
    const url = `${base}/vipapi/eth/token/${tokens[0]!.address}?apikey=${key}`;
    await eventually(
      async () => ((await getJson(url)).status === 401 ? true : undefined),
      3000,
      'a 401 for the revoked key',
      50,
    );
    const ms = Date.now() - revokedAt;
    assert.ok(ms <= 1000, `the revoked key still worked for ${ms} ms`);
  });

  test('a revoked key given by its value is refused too', async () => {
    const { key } = await createKey(db);
    const url = `${base}/vipapi/eth/tokens/1/10?apikey=${key}`;
    assert.equal((await getJson(url)).body.code, 1);
    const revoke = await runCli(['keys', 'revoke', key, '--db', db]);
    assert.equal(revoke.code, 0, revoke.stderr);
    const revokedAt = Date.now();
    await eventually(
      async () => ((await getJson(url)).status === 401 ? true : undefined),
      3000,
      'a 401 for the revoked key',
      50,
    );
    assert.ok(Date.now() - revokedAt <= 1000);
  });

  test('SIGTERM exits 0 within a few seconds, and no output ever shows the RPC credentials', async () => {
    const status = (await getJson(`${base}/status`)).text;
    const signalled = Date.now();
    const result = await cli.stop('SIGTERM');
    const ms = Date.now() - signalled;
    assert.equal(result.code, 0, `exit ${result.code} ${result.signal} after ${ms} ms\n${result.stderr}`);
    assert.ok(ms < 3000, `shutdown took ${ms} ms`);
    assert.ok(
      logLines(result.stderr).some((line) => line.msg === 'shutting down'),
      'no shutdown log line',
    );
    for (const text of [result.stdout, result.stderr, status]) {
      assert.ok(!text.includes(secret), 'the RPC password leaked');
      assert.ok(!text.includes('operator:'), 'the RPC user leaked');
    }
  });
});

describe('index and serve: two processes on one SQLite file, configured by environment variables', () => {
  let indexer: CliProcess;
  let server: CliProcess;
  let base: string;
  let db: string;

  before(async () => {
    db = join(tempDir(), 'shared.sqlite');
    const port = await freePort();
    // As in a compose file: the same variables for both, and the port for serve.
    const env = { TOKENQUERY_RPC: `eth=${anvil.url}`, TOKENQUERY_DB: db, TOKENQUERY_POLL_INTERVAL_MS: '100' };
    indexer = spawn(['index'], env);
    // `serve` refuses a store that does not exist yet: `index` creates it.
    await eventually(async () => (existsSync(db) ? true : undefined), 15_000, 'index created the store');
    server = spawn(['serve'], { ...env, TOKENQUERY_PORT: String(port) });
    base = await apiUrl(server, 'tokenquery serving');
    assert.equal(base, `http://127.0.0.1:${port}`);
  });

  test('serve answers Token Info with the data index wrote', async () => {
    const result = await runCli(['keys', 'create', '--label', 'shared'], { env: { TOKENQUERY_DB: db } });
    assert.equal(result.code, 0, result.stderr);
    const key = lines(result.stdout).at(-1)!;
    for (const token of tokens) await tokenInfoOnceIndexed(base, key, token);
  });

  test("serve's /status follows the progress of index", async () => {
    const before = await indexedUpTo(base, head);
    await sendTransfers(anvil.url, tokens, { count: 2, seed: 8 });
    const newHead = await getBlockNumber(anvil.url);
    assert.ok(newHead > before.indexed);
    const after = await indexedUpTo(base, newHead);
    assert.ok(after.head >= newHead);
  });

  test('both stop with exit 0 on SIGTERM', async () => {
    const signalled = Date.now();
    const [served, indexed] = await Promise.all([server.stop('SIGTERM'), indexer.stop('SIGTERM')]);
    const ms = Date.now() - signalled;
    assert.equal(served.code, 0, served.stderr);
    assert.equal(indexed.code, 0, indexed.stderr);
    assert.ok(ms < 3000, `shutdown took ${ms} ms`);
    assert.ok(
      logLines(indexed.stderr).some((line) => line.msg === 'tokenquery indexing'),
      indexed.stderr,
    );
  });
});
