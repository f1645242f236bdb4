/**
 * The class an indexing failure is shown as to anyone (`/status` without a key): from the error's
 * type where it tells, else from the recorded text, and never the text itself.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { RpcResponseError, RpcTransportError } from '../chains/jsonrpc/errors.js';
import { errorClassOf, FatalIndexerError } from '../internal/errors.js';
import { silentLogger } from '../internal/logger.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { createChainStatusReport, errorClass, runIndexerLoop } from './loop.js';
import { createSupplyRefresh } from './supply-refresh.js';

describe('errorClass', () => {
  test('by type', () => {
    const cases: [unknown, string][] = [
      [
        new RpcTransportError('eth_getLogs failed after 5 attempts: timed out after 30000 ms', {
          retryable: true,
        }),
        'rpc timeout',
      ],
      [
        new RpcTransportError('eth_blockNumber failed after 5 attempts: ECONNREFUSED', { retryable: true }),
        'rpc unreachable',
      ],
      [
        new RpcTransportError('RPC endpoint answered HTTP 503', { status: 503, retryable: true }),
        'rpc unreachable',
      ],
      [
        new RpcTransportError('RPC endpoint answered HTTP 401', { status: 401, retryable: false }),
        'rpc error',
      ],
      [new RpcResponseError('eth_getLogs', { code: -32000, message: 'boom' }), 'rpc error'],
      [new FatalIndexerError('reorg deeper than the unfinalized window on eth: ...'), 'reorg too deep'],
      [new FatalIndexerError('the node serves another chain'), 'indexer stopped'],
      [
        Object.assign(new Error('connect ECONNREFUSED 10.1.2.3:5432'), { code: 'ECONNREFUSED' }),
        'database unreachable',
      ],
      [
        Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
        'database unreachable',
      ],
      [
        Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }),
        'database error',
      ],
      [Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }), 'database error'],
      [Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }), 'disk full'],
      // As the SQLite writer thread rebuilds it: the name and text cross, the code does not.
      [Object.assign(new Error('database or disk is full'), { name: 'SqliteError' }), 'disk full'],
      [
        Object.assign(new Error('could not extend file "base/1/2": No space left on device'), {
          code: '53100',
        }),
        'disk full',
      ],
      [Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }), 'disk full'],
      [new TypeError("Cannot read properties of undefined (reading 'x')"), 'internal error'],
    ];
    for (const [error, expected] of cases) assert.equal(errorClass(error), expected, String(error));
  });

  test('recorded texts: the class they start with, else a guess from their words', () => {
    const cases: [string, string][] = [
      ['rpc timeout: eth_getLogs failed after 5 attempts: timed out after 30000 ms', 'rpc timeout'],
      ['database error: SQLITE_FULL', 'database error'],
      ['disk full: database or disk is full', 'disk full'],
      ['database or disk is full', 'disk full'],
      ['connect ECONNREFUSED 10.1.2.3:5432 user=admin', 'database unreachable'],
      ['password authentication failed for user "admin"', 'database unreachable'],
      ['node unreachable', 'rpc unreachable'],
      ['eth_getLogs failed: JSON-RPC error -32000: header not found', 'rpc error'],
      ['reorg deeper than the unfinalized window on bsc', 'reorg too deep'],
      ['something odd at 10.0.0.7', 'internal error'],
    ];
    for (const [text, expected] of cases) assert.equal(errorClassOf(text), expected, text);
  });
});

describe('the run loop', () => {
  /** Runs the loop over steps that fail `fails` times, advancing `next` before each failure when `progress`; the attempts logged. */
  async function attemptsLogged(progress: boolean, fails: number): Promise<unknown[]> {
    const store = await openSqliteStore({ path: ':memory:', logger: silentLogger() });
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const controller = new AbortController();
    let next = 0;
    let failed = 0;
    const chain = {
      name: 'eth' as const,
      rpcUrl: 'http://127.0.0.1:1',
      fromBlock: 0,
      finalityDepth: 0,
      pollIntervalMs: 10,
    };
    try {
      await runIndexerLoop({
        chain,
        store: store.writer,
        logger,
        signal: controller.signal,
        status: createChainStatusReport(store.writer, 'eth'),
        supply: createSupplyRefresh({
          chain: 'eth',
          store: store.writer,
          logger,
          signal: controller.signal,
          everyBlocks: 100,
          read: async () => [],
        }),
        steps: {
          resume() {},
          next: () => next,
          async step() {
            if (failed === fails) {
              controller.abort();
              return 'idle';
            }
            if (progress) next += 10;
            failed++;
            throw new Error('database or disk is full');
          },
          retryDelay: () => 1,
        },
      });
    } finally {
      await store.close();
    }
    return lines.filter((l) => l.msg === 'indexing step failed; retrying').map((l) => l.attempt);
  }

  test('failures in a row count up; a step that made progress before failing starts over', async () => {
    assert.deepEqual(await attemptsLogged(false, 4), [1, 2, 3, 4]);
    assert.deepEqual(await attemptsLogged(true, 4), [1, 1, 1, 1]);
  });
});
