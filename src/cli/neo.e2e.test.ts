/**
 * NEO end to end, through the real CLI: `tokenquery index` against the fake NEO node serving
 * the window around mainnet block 1444843 (RPX `deploy`, a method call minting 3 balances),
 * killed with SIGKILL mid-way several times and resumed; then `tokenquery start` on the same
 * store, and every NEO operation checked over HTTP: exact key sets, JSON types, values drawn
 * from the recordings (and the window's synthetic scaffolding), paging and error rows.
 *
 * What RPX shows: its NEP-5 metadata was never recorded, so the fake node answers `name`,
 * `symbol`, `decimals` and `totalSupply` as a node answers a contract without them (FAULT).
 * The reading of missing metadata in docs/api.md#neo-names applies: `f` and `s` are `""`, `d` is
 * `"0"`, the supply is unknown (`t: null`, supply operations 404); and `i`/`o` are null because
 * RPX was deployed before the window (docs/api.md#neo-categories-creation-time-and-creator).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type FakeNeoNode, startFakeNeoNode } from '../chains/neo/testing/fake-neo-node.js';
import { loadNeoscanRecordings } from '../chains/neo/testing/recordings.js';
import { RPX_DEPLOY_BLOCK, RPX_HASH } from '../chains/neo/testing/synthetic.js';
import { GAS_ASSET_ID, NEO_ASSET_ID } from '../chains/neo/utxo.js';
import {
  assertStoreMatchesTruth,
  holdersOf,
  type NeoWindowTruth,
  neoWindowTruth,
  RPX_DEPLOY_TXID,
} from '../indexer/testing/neo-truth.js';
import { EXTRAS_BLOCK, neoIndexerWindow, PUBLISH_TXID } from '../indexer/testing/neo-window.js';
import { silentLogger } from '../internal/logger.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import {
  apiUrl,
  assertOneLineError,
  type CliProcess,
  eventually,
  freePort,
  getJson,
  lines,
  removeTempDirs,
  runCli,
  spawnCli,
  tempDir,
} from './testing/cli-process.js';

const FROM = RPX_DEPLOY_BLOCK - 300;
const TO = RPX_DEPLOY_BLOCK + 300;
const logger = silentLogger();

let node: FakeNeoNode;
let truth: NeoWindowTruth;
let db: string;
let server: CliProcess | undefined;
let base: string;
let key: string;
const children: CliProcess[] = [];

before(async () => {
  node = await startFakeNeoNode(neoIndexerWindow(FROM, TO));
  truth = await neoWindowTruth(node.url, FROM, TO);
  db = join(tempDir('tq-neo-e2e-'), 'neo.sqlite');
});

after(async () => {
  await Promise.all(children.map((child) => child.stop('SIGKILL')));
  await node?.close();
  removeTempDirs();
});

function spawn(args: string[]): CliProcess {
  const child = spawnCli(args);
  children.push(child);
  return child;
}

const nodeArgs = () => ['--rpc', `neo=${node.url}`, '--from-block', `neo=${FROM}`, '--db', db];

async function checkpoint(): Promise<number> {
  const store = await openSqliteStore({ path: db, logger });
  try {
    return (await store.writer.getCheckpoint('neo'))?.block ?? -1;
  } finally {
    await store.close();
  }
}

async function get(path: string, withKey = true) {
  const url = `${base}${path}${withKey ? `${path.includes('?') ? '&' : '?'}apikey=${key}` : ''}`;
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

async function ok(path: string): Promise<unknown> {
  const answer = await get(path);
  assert.equal(answer.status, 200, `${path}: ${answer.text}`);
  assert.equal(answer.type, 'application/json; charset=utf-8');
  const body = JSON.parse(answer.text) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body), ['code', 'msg', 'data'], path);
  assert.equal(body.code, 1, `${path}: ${answer.text}`);
  assert.equal(body.msg, '成功');
  return body.data;
}

async function error(
  path: string,
  expected: { http: number; code: number; msg: string | RegExp },
  withKey = true,
) {
  const answer = await get(path, withKey);
  assert.equal(answer.status, expected.http, `${path}: ${answer.text}`);
  assert.equal(answer.type, 'application/json; charset=utf-8', path);
  const body = JSON.parse(answer.text) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body), ['code', 'msg', 'data'], path);
  assert.equal(body.code, expected.code, `${path}: ${answer.text}`);
  assert.equal(body.data, null);
  if (typeof expected.msg === 'string') assert.equal(body.msg, expected.msg, path);
  else assert.match(String(body.msg), expected.msg, path);
  assert.ok(!answer.text.includes(key), 'an error echoes the apikey');
}

type Kind = 'string' | 'number' | 'null' | 'object' | 'string|null';

/** Exact key list, in order, and the JSON type of each key. */
function shape(value: unknown, expected: Record<string, Kind>, what: string): Record<string, unknown> {
  assert.ok(value !== null && typeof value === 'object' && !Array.isArray(value), `${what}: not an object`);
  const record = value as Record<string, unknown>;
  assert.deepEqual(Object.keys(record), Object.keys(expected), `${what}: keys`);
  for (const [k, kind] of Object.entries(expected)) {
    const v = record[k];
    const actual = v === null ? 'null' : typeof v;
    if (kind === 'string|null')
      assert.ok(actual === 'string' || actual === 'null', `${what}.${k}: ${actual}`);
    else assert.equal(actual, kind, `${what}.${k} is ${actual}, expected ${kind}`);
    if (kind === 'number') assert.ok(Number.isInteger(v), `${what}.${k} is not an integer`);
  }
  return record;
}

const NEO_TOKEN_INFO: Record<string, Kind> = {
  appendixData: 'null',
  pending: 'null',
  h: 'string',
  p: 'null',
  f: 'string',
  s: 'string',
  d: 'string',
  t: 'string|null',
  c: 'string',
  i: 'string|null',
  o: 'string|null',
  l: 'null',
};

const TRANSFER_RECORD: Record<string, Kind> = {
  index: 'number',
  block_no: 'number',
  token: 'null',
  asset: 'null',
  tokenAddr: 'string',
  tokenSymbol: 'string',
  tokenDecimals: 'string',
  time: 'number',
  txid: 'string',
  tokenInfo: 'object',
  confirmations: 'number',
  type: 'null',
  from: 'string',
  to: 'string',
  fromAlias: 'null',
  toAlias: 'null',
  value: 'string',
  valueIsNft: 'null',
  fromIsContract: 'null',
  toIsContract: 'null',
  amount: 'null',
};

describe('NEO through the CLI', () => {
  test('index: SIGKILL mid-way several times, then resume: nothing lost, nothing doubled', async (t) => {
    const checkpoints: number[] = [];
    for (let run = 0; run < 4; run++) {
      const startedAt = await checkpoint();
      // Slow every answer a little, so that the kills land between commits rather than after the
      // last: a whole run over the window takes about 60 requests, so 40 delays were not enough on
      // a quiet machine (the first run finished the window before its kill).
      node.injectFaults(...Array.from({ length: 80 }, () => ({ type: 'delay' as const, ms: 20 })));
      const child = spawn(['index', ...nodeArgs(), '--log-level', 'silent']);
      await eventually(
        async () => ((await checkpoint()) > startedAt ? true : undefined),
        15_000,
        'the run to commit',
        10,
      ).catch(() => {});
      await new Promise((r) => setTimeout(r, Math.random() * 60));
      child.child.kill('SIGKILL');
      await child.exited;
      checkpoints.push(await checkpoint());
      if (checkpoints.at(-1) === TO) break;
    }
    t.diagnostic(`checkpoints at the kills: ${checkpoints.join(', ')} (window ${FROM}..${TO})`);
    // At least one kill mid-way. More cannot be promised: the indexer keeps four ranges in flight,
    // so once four or fewer remain they land and commit together, and a faster machine (or store)
    // finishes them within the kill's delay (seen in CI after the writer got faster).
    const midway = checkpoints.filter((c) => c >= FROM && c < TO);
    assert.ok(midway.length >= 1, `checkpoints at the kills: ${checkpoints} (window ${FROM}..${TO})`);
    assert.ok(
      checkpoints.every((c, i) => i === 0 || c >= checkpoints[i - 1]!),
      `checkpoints never go back: ${checkpoints}`,
    );

    // `start` resumes the rest and serves it.
    server = spawn(['start', ...nodeArgs(), '--port', '0']);
    base = await apiUrl(server, 'tokenquery started');
    await eventually(
      async () => {
        const { body } = await getJson(`${base}/status`);
        const neo = (body.chains as Record<string, { indexed: number }> | undefined)?.neo;
        return neo?.indexed === TO ? true : undefined;
      },
      20_000,
      'neo indexed to the head',
    );
    const store = await openSqliteStore({ path: db, logger });
    try {
      await assertStoreMatchesTruth(store, truth);
    } finally {
      await store.close();
    }
    const created = await runCli(['keys', 'create', '--label', 'neo', '--db', db]);
    assert.equal(created.code, 0, created.stderr);
    key = lines(created.stdout).at(-1)!;
  });

  test('/status reports neo', async () => {
    const { status, body } = await getJson(`${base}/status`);
    assert.equal(status, 200);
    assert.deepEqual((body.chains as Record<string, unknown>).neo, {
      head: TO,
      indexed: TO,
      lag: 0,
      notExactTokens: 0,
      lastError: null,
    });
  });

  test('Token Info: both path orders, any case, with or without 0x; RPX with its missing metadata', async () => {
    const expected = {
      appendixData: null,
      pending: null,
      network: 'NEO',
      tokenHash: RPX_HASH,
      transferCnt: truth.rpxMints.length,
      holderCnt: new Set(truth.rpxMints.map((m) => m.to)).size,
      contract: null,
      circulationSupply: null,
      tokenInfo: {
        appendixData: null,
        pending: null,
        h: RPX_HASH,
        p: null,
        f: '',
        s: '',
        d: '0',
        t: null,
        c: 'NEP5',
        i: null,
        o: null,
        l: null,
      },
    };
    for (const hash of [
      RPX_HASH,
      RPX_HASH.slice(2),
      RPX_HASH.toUpperCase().replace('0X', '0x'),
      RPX_HASH.toUpperCase(),
    ]) {
      for (const path of [`/vipapi/neo/token/${hash}`, `/vipapi/token/neo/${hash}`]) {
        const data = await ok(path);
        shape(
          data,
          {
            appendixData: 'null',
            pending: 'null',
            network: 'string',
            tokenHash: 'string',
            transferCnt: 'number',
            holderCnt: 'number',
            contract: 'null',
            circulationSupply: 'null',
            tokenInfo: 'object',
          },
          path,
        );
        shape((data as { tokenInfo: unknown }).tokenInfo, NEO_TOKEN_INFO, `${path} tokenInfo`);
        assert.deepEqual(data, expected, path);
      }
    }
    assert.equal(expected.transferCnt, 3);
    assert.equal(expected.holderCnt, 3);
  });

  test('Token Info of the NEO asset: category and counts; t stays null in this operation', async () => {
    const data = (await ok(`/vipapi/neo/token/${NEO_ASSET_ID}`)) as Record<string, unknown>;
    assert.equal(data.transferCnt, truth.assetTransfers.get(NEO_ASSET_ID)!.length);
    assert.equal(data.holderCnt, holdersOf(truth, NEO_ASSET_ID));
    assert.deepEqual(data.tokenInfo, {
      appendixData: null,
      pending: null,
      h: NEO_ASSET_ID,
      p: null,
      f: 'NEO',
      s: 'NEO',
      d: '0',
      t: null,
      c: 'GoverningToken',
      i: null,
      o: null,
      l: null,
    });
  });

  test('Total and Max Supply: bare numbers for the assets, 404 for a token whose supply is unknown', async () => {
    const neoState = loadNeoscanRecordings().assets.find((a) => a.id === NEO_ASSET_ID)!;
    for (const [path, expected] of [
      [`/vipapi/token/totalsupply/neo/${NEO_ASSET_ID}`, neoState.available],
      [`/vipapi/token/maxsupply/neo/${NEO_ASSET_ID.slice(2).toUpperCase()}`, neoState.amount],
      // GAS's state is synthetic: 100M issued of a 100M cap.
      [`/vipapi/token/totalsupply/neo/${GAS_ASSET_ID}`, '100000000'],
      [`/vipapi/token/maxsupply/neo/${GAS_ASSET_ID}`, '100000000'],
    ] as const) {
      const answer = await get(path);
      assert.equal(answer.status, 200, `${path}: ${answer.text}`);
      assert.equal(answer.type, 'text/plain; charset=utf-8');
      assert.equal(answer.text, expected, path);
    }
    for (const kind of ['totalsupply', 'maxsupply']) {
      await error(`/vipapi/token/${kind}/neo/${RPX_HASH}`, { http: 200, code: 404, msg: '无数据' });
    }
  });

  test('Token Transaction List: RPX mints newest first, every key, confirmations spelled right', async () => {
    const data = (await ok(`/vipapi/neo/token/tokentrans/${RPX_HASH}/1/50`)) as Record<string, unknown>[];
    assert.equal(data.length, 3);
    const invocation = truth.blocks
      .find((b) => b.index === RPX_DEPLOY_BLOCK)!
      .transactions.find((tx) => tx.txid === RPX_DEPLOY_TXID)!;
    const block = truth.blocks.find((b) => b.index === RPX_DEPLOY_BLOCK)!;
    data.forEach((record, i) => {
      shape(record, TRANSFER_RECORD, `record ${i}`);
      shape(record.tokenInfo, NEO_TOKEN_INFO, `record ${i} tokenInfo`);
      const mint = truth.rpxMints[truth.rpxMints.length - 1 - i]!;
      assert.deepEqual(
        {
          index: record.index,
          block_no: record.block_no,
          tokenAddr: record.tokenAddr,
          tokenSymbol: record.tokenSymbol,
          tokenDecimals: record.tokenDecimals,
          time: record.time,
          txid: record.txid,
          confirmations: record.confirmations,
          from: record.from,
          to: record.to,
          value: record.value,
        },
        {
          index: invocation.index,
          block_no: RPX_DEPLOY_BLOCK,
          tokenAddr: RPX_HASH,
          tokenSymbol: '',
          tokenDecimals: '0',
          time: block.time,
          txid: RPX_DEPLOY_TXID,
          confirmations: TO - RPX_DEPLOY_BLOCK + 1,
          from: '',
          to: mint.to,
          value: mint.value.toString(),
        },
      );
      assert.equal((record.tokenInfo as { t: unknown }).t, null);
      assert.ok(!('conformations' in record));
    });
    // Paging: the third record alone, then past the end.
    assert.deepEqual(await ok(`/vipapi/neo/token/tokentrans/${RPX_HASH}/2/2`), [data[2]]);
    assert.deepEqual(await ok(`/vipapi/neo/token/tokentrans/${RPX_HASH}/2/50`), []);
    assert.deepEqual(await ok(`/vipapi/neo/token/tokentrans/${RPX_HASH}/01/003`), data);
  });

  test('Token Transaction List of an asset: the UTXO transfers, newest first', async () => {
    const expected = [...truth.assetTransfers.get(NEO_ASSET_ID)!].reverse();
    const data = (await ok(`/vipapi/neo/token/tokentrans/${NEO_ASSET_ID}/1/50`)) as Record<string, unknown>[];
    assert.deepEqual(
      data.map((r) => [r.block_no, r.index, r.txid, r.from, r.to, r.value, r.confirmations]),
      expected.map((t) => [
        t.blockNumber,
        t.txIndex,
        t.txHash,
        t.from,
        t.to,
        t.value.toString(),
        TO - t.blockNumber + 1,
      ]),
    );
    for (const record of data) shape(record, TRANSFER_RECORD, 'asset record');
    assert.equal(data[0]?.block_no, EXTRAS_BLOCK, 'the synthetic spend after block 1444843 comes first');
  });

  test('Assets (Token) Info: NEO with its supply, RPX with t null', async () => {
    const neoState = loadNeoscanRecordings().assets.find((a) => a.id === NEO_ASSET_ID)!;
    const data = await ok(`/vipapi/neo/asset/${NEO_ASSET_ID}`);
    const tokenInfoShape: Record<string, Kind> = {
      h: 'string',
      f: 'string',
      s: 'string',
      d: 'string',
      t: 'string|null',
      c: 'string',
      i: 'string|null',
      o: 'string|null',
    };
    shape(
      data,
      {
        network: 'string',
        tokenHash: 'string',
        transferCnt: 'number',
        holderCnt: 'number',
        tokenInfo: 'object',
      },
      'asset',
    );
    shape((data as { tokenInfo: unknown }).tokenInfo, tokenInfoShape, 'asset tokenInfo');
    assert.deepEqual(data, {
      network: 'NEO',
      tokenHash: NEO_ASSET_ID,
      transferCnt: truth.assetTransfers.get(NEO_ASSET_ID)!.length,
      holderCnt: holdersOf(truth, NEO_ASSET_ID),
      tokenInfo: {
        h: NEO_ASSET_ID,
        f: 'NEO',
        s: 'NEO',
        d: '0',
        t: neoState.available,
        c: 'GoverningToken',
        i: null,
        o: null,
      },
    });
    const rpx = (await ok(`/vipapi/neo/asset/${RPX_HASH.slice(2)}`)) as {
      tokenInfo: Record<string, unknown>;
    };
    assert.deepEqual(rpx.tokenInfo, {
      h: RPX_HASH,
      f: '',
      s: '',
      d: '0',
      t: null,
      c: 'NEP5',
      i: null,
      o: null,
    });
  });

  test('Assets (Token) List On Chain: assets and NEP-5 tokens, ranked, with every null key', async () => {
    const page = (await ok('/vipapi/tokens/neo/1/50')) as Record<string, unknown>;
    shape(
      page,
      {
        page: 'number',
        size: 'number',
        total: 'number',
        data: 'object',
        appendixData: 'null',
        pending: 'null',
        note: 'null',
      },
      'page',
    );
    assert.equal(page.page, 1);
    assert.equal(page.size, 50);
    assert.equal(page.total, 3);
    const entries = page.data as Record<string, unknown>[];
    const holders = new Map<string, number>([
      [NEO_ASSET_ID, holdersOf(truth, NEO_ASSET_ID)],
      [GAS_ASSET_ID, holdersOf(truth, GAS_ASSET_ID)],
      [RPX_HASH, 3],
    ]);
    const transfers = new Map<string, number>([
      [NEO_ASSET_ID, truth.assetTransfers.get(NEO_ASSET_ID)!.length],
      [GAS_ASSET_ID, truth.assetTransfers.get(GAS_ASSET_ID)!.length],
      [RPX_HASH, 3],
    ]);
    const ranked = [...holders.keys()].sort(
      (a, b) =>
        holders.get(b)! - holders.get(a)! || transfers.get(b)! - transfers.get(a)! || (a < b ? -1 : 1),
    );
    assert.deepEqual(
      entries.map((e) => (e.tokenInfo as { h: string }).h),
      ranked,
    );
    const neoState = loadNeoscanRecordings().assets.find((a) => a.id === NEO_ASSET_ID)!;
    for (const entry of entries) {
      shape(
        entry,
        {
          appendixData: 'null',
          pending: 'null',
          network: 'null',
          tokenHash: 'null',
          transferCnt: 'null',
          holderCnt: 'number',
          contract: 'null',
          circulationSupply: 'string|null',
          tokenInfo: 'object',
        },
        'entry',
      );
      const info = shape(entry.tokenInfo, NEO_TOKEN_INFO, 'entry tokenInfo');
      assert.equal(entry.holderCnt, holders.get(info.h as string));
      assert.equal(entry.circulationSupply, info.t, 'circulationSupply is the total supply');
    }
    const byHash = new Map(entries.map((e) => [(e.tokenInfo as { h: string }).h, e]));
    assert.equal(byHash.get(NEO_ASSET_ID)!.circulationSupply, neoState.available);
    assert.equal((byHash.get(GAS_ASSET_ID)!.tokenInfo as { c: string }).c, 'UtilityToken');
    assert.equal(byHash.get(RPX_HASH)!.circulationSupply, null, 'RPX supply unknown');
    assert.deepEqual(((await ok('/vipapi/tokens/neo/2/2')) as { data: unknown[] }).data, [entries[2]]);
    const past = (await ok('/vipapi/tokens/neo/3/2')) as { data: unknown[]; total: number };
    assert.deepEqual([past.data, past.total], [[], 3]);
  });

  test('Contracts List On Chain: the deployment inside the window', async () => {
    const recorded = loadNeoscanRecordings().transactions.find((tx) => tx.txid === PUBLISH_TXID)!;
    const contract = recorded.contract as { name: string; author: string; code: { hash: string } };
    const block = truth.blocks.find((b) => b.index === EXTRAS_BLOCK)!;
    const data = (await ok('/vipapi/contracts/neo/1/50')) as unknown[];
    assert.equal(data.length, 1);
    shape(
      data[0],
      {
        createTime: 'number',
        author: 'string',
        name: 'string',
        contractAddress: 'string',
        ownerAddress: 'string',
      },
      'contract',
    );
    assert.deepEqual(data[0], {
      createTime: block.time,
      author: contract.author,
      name: contract.name,
      contractAddress: contract.code.hash,
      // The deploying transaction's first witness owns its GAS change.
      ownerAddress: (recorded.vout as { address: string }[])[0]!.address,
    });
    assert.deepEqual(await ok('/vipapi/contracts/neo/2/50'), []);
  });

  test('error rows: key, parameters, unknown tokens, unknown paths, methods, operations NEO lacks', async () => {
    const unknown = `0x${'12'.repeat(20)}`;
    const invalid = (what: RegExp) => ({ http: 200, code: 10001, msg: what });
    const noData = { http: 200, code: 404, msg: '无数据' };
    await error(`/vipapi/neo/token/${RPX_HASH}`, { http: 401, code: 50003, msg: 'invalid apikey' }, false);
    await error(
      `/vipapi/contracts/neo/1/10?apikey=nope`,
      { http: 401, code: 50003, msg: 'invalid apikey' },
      false,
    );
    for (const path of [
      '/vipapi/neo/token/0x12',
      `/vipapi/token/neo/${RPX_HASH}00`,
      '/vipapi/neo/asset/not-a-hash',
      `/vipapi/token/totalsupply/neo/0x${'g'.repeat(40)}`,
      `/vipapi/neo/token/tokentrans/0x${'1'.repeat(41)}/1/10`,
    ]) {
      await error(path, invalid(/^invalid parameter: address must be a NEO script hash/));
    }
    for (const [page, size] of [
      ['0', '10'],
      ['51', '10'],
      ['1', '51'],
      ['1', '0'],
      ['-1', '10'],
      ['1.0', '10'],
      ['a', '10'],
    ]) {
      await error(
        `/vipapi/neo/token/tokentrans/${RPX_HASH}/${page}/${size}`,
        invalid(/^invalid parameter: (page|size)/),
      );
      await error(`/vipapi/tokens/neo/${page}/${size}`, invalid(/^invalid parameter: (page|size)/));
      await error(`/vipapi/contracts/neo/${page}/${size}`, invalid(/^invalid parameter: (page|size)/));
    }
    for (const path of [
      `/vipapi/neo/token/${unknown}`,
      `/vipapi/token/neo/${unknown}`,
      `/vipapi/neo/asset/0x${'34'.repeat(32)}`,
      `/vipapi/neo/token/tokentrans/${unknown}/1/10`,
      `/vipapi/token/totalsupply/neo/${unknown}`,
      `/vipapi/token/maxsupply/neo/${unknown}`,
    ]) {
      await error(path, noData);
    }
    // The token is checked after the parameters.
    await error(`/vipapi/neo/token/tokentrans/${unknown}/0/10`, invalid(/^invalid parameter: page/));
    // NEO has no circulating supply and no EVM-style token list.
    await error(`/vipapi/token/circulatingsupply/neo/${RPX_HASH}`, {
      http: 200,
      code: 50001,
      msg: 'unsupport coin',
    });
    await error('/vipapi/neo/tokens/1/10', { http: 200, code: 50001, msg: 'unsupport coin' });
    await error('/vipapi/neo/contracts/1/10', { http: 404, code: 404, msg: 'not found' });
    await error('/vipapi/contracts/neo/1', { http: 404, code: 404, msg: 'not found' });
    const post = await fetch(`${base}/vipapi/neo/asset/${NEO_ASSET_ID}?apikey=${key}`, { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    const head = await fetch(`${base}/vipapi/neo/asset/${NEO_ASSET_ID}?apikey=${key}`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
  });

  test('serve alone answers NEO from the store, and stops cleanly', async () => {
    await server?.stop('SIGTERM');
    const serve = spawn(['serve', '--db', db, '--port', '0']);
    base = await apiUrl(serve, 'tokenquery serving');
    const data = (await ok(`/vipapi/neo/token/${RPX_HASH}`)) as { transferCnt: number };
    assert.equal(data.transferCnt, 3);
    const { body } = await getJson(`${base}/status`);
    assert.deepEqual((body.chains as Record<string, unknown>).neo, {
      head: TO,
      indexed: TO,
      lag: 0,
      notExactTokens: 0,
      lastError: null,
    });
    const result = await serve.stop('SIGTERM');
    assert.equal(result.code, 0, result.stderr);
  });
});

describe('NEO node checks at start-up', () => {
  test('a node without the ApplicationLogs plugin is one clear line, exit 2', async () => {
    // A node that knows getblockcount and nothing else, as neo-cli without the plugin answers.
    const plain = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8');
      });
      req.on('end', () => {
        const call = JSON.parse(body) as { id: number; method: string };
        const reply =
          call.method === 'getblockcount'
            ? { jsonrpc: '2.0', id: call.id, result: 10 }
            : { jsonrpc: '2.0', id: call.id, error: { code: -32601, message: 'Method not found' } };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
      });
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const { port } = plain.address() as AddressInfo;
    try {
      const result = await runCli([
        'index',
        '--rpc',
        `neo=http://127.0.0.1:${port}/`,
        '--db',
        join(tempDir(), 'x.sqlite'),
      ]);
      assertOneLineError(
        result,
        /^tokenquery: the neo node has no getapplicationlog method: .*ApplicationLogs plugin$/,
      );
    } finally {
      await new Promise((resolve) => plain.close(resolve));
    }
  });

  test('a neo node that does not answer is one clear line, exit 2', async () => {
    const port = await freePort();
    const result = await runCli([
      'index',
      '--rpc',
      `neo=http://127.0.0.1:${port}/`,
      '--db',
      join(tempDir(), 'y.sqlite'),
    ]);
    assertOneLineError(result, /^tokenquery: the neo node does not answer JSON-RPC/);
  });
});
