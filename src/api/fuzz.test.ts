/**
 * Hostile input (issue #6, item 4): thousands of malformed requests, sent as raw bytes over a
 * socket so that nothing (no URL normalisation in a client) softens them. Pass: no 5xx, every body
 * a contract envelope (or a supply's bare number), and no stack trace, SQL, file path, RPC URL or
 * key in any answer or log line.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { chaosSeed, scaled } from '../indexer/testing/chaos.js';
import { seededRandom } from '../internal/random.js';
import { type ApiFixture, startApiFixture, USDC } from './testing/fixture.js';

let fx: ApiFixture;
const logLines: string[] = [];
before(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString('utf8'));
      done();
    },
  });
  fx = await startApiFixture({ logger: pino({ level: 'debug' }, sink) });
});
after(async () => {
  await fx?.close();
});

interface RawAnswer {
  status: number;
  body: string;
}

/** Sends `head` (request line and headers, CRLF-separated, without the final blank line) as is. */
function rawRequest(port: number, head: string, body = ''): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer to ${head.slice(0, 80)}`)));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const split = text.indexOf('\r\n\r\n');
      resolve({ status, body: split < 0 ? '' : text.slice(split + 4) });
    });
    const length =
      body === '' ? '' : `\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}`;
    socket.end(`${head}\r\nHost: 127.0.0.1\r\nConnection: close${length}\r\n\r\n${body}`, 'latin1');
  });
}

const ADDRESSES = [
  USDC,
  USDC.toUpperCase().replace('0X', '0x'),
  USDC.slice(0, 41),
  `${USDC}00`,
  '0x',
  '',
  '..%2f..%2fetc%2fpasswd',
  '../../etc/passwd',
  "0x' OR '1'='1",
  '0x1;DROP TABLE tokens;--',
  '%00',
  '\u00e9\u00e8',
  '%F0%9F%92%A9',
  `0x${'g'.repeat(40)}`,
  'AK2nJJpJr6o664CWJKi1QRXjqeic2zRp8y',
  `0x${'a'.repeat(5_000)}`,
  '%',
  '%zz',
];
const NUMBERS = [
  '1',
  '0',
  '-1',
  '1.5',
  '1e3',
  '0x10',
  '99999999999999999999',
  'NaN',
  '',
  '%31',
  '١',
  ' 1',
  '1 ',
];
const CHAINS = ['eth', 'bsc', 'neo', 'ETH', 'btc', '', '..', 'eth%00', 'kcs', 'movr'];
const METHODS = ['GET', 'GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE'];

function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)]!;
}

/** A request path, from the operation shapes (the 13 and the address and holder ones) with hostile parts, or noise. */
function hostilePath(random: () => number, key: string): string {
  const a = () => pick(random, ADDRESSES);
  const n = () => pick(random, NUMBERS);
  const c = () => pick(random, CHAINS);
  const shapes = [
    () => `/vipapi/${c()}/token/${a()}`,
    () => `/vipapi/token/totalsupply/${c()}/${a()}`,
    () => `/vipapi/token/maxsupply/${c()}/${a()}`,
    () => `/vipapi/token/circulatingsupply/${c()}/${a()}`,
    () => `/vipapi/${c()}/token/tokentrans/${a()}/${n()}/${n()}`,
    () => `/vipapi/${c()}/tokens/${n()}/${n()}`,
    () => `/vipapi/token/neo/${a()}`,
    () => `/vipapi/neo/token/${a()}`,
    () => `/vipapi/neo/token/tokentrans/${a()}/${n()}/${n()}`,
    () => `/vipapi/neo/assets/${n()}/${n()}`,
    () => `/vipapi/neo/contracts/${n()}/${n()}`,
    () => `/vipapi/${c()}/address/tokenbalance/${a()}`,
    () => `/vipapi/${c()}/address/tokenbalance/${a()}/${a()}`,
    () => `/vipapi/${c()}/address/tokentrans/${a()}/${a()}/${n()}/${n()}`,
    () => `/vipapi/${c()}/address/tokentrans/${a()}/${n()}/${n()}`,
    () => `/vipapi/${c()}/token/holders/${a()}/${n()}/${n()}`,
    () => `/${a()}/${a()}`,
    () => `/vipapi/${'x/'.repeat(Math.floor(random() * 50))}`,
  ];
  let path = pick(random, shapes)();
  const keyKind = random();
  const query =
    keyKind < 0.5
      ? `apikey=${key}`
      : keyKind < 0.6
        ? ''
        : keyKind < 0.7
          ? `apikey=${'k'.repeat(10_000)}`
          : keyKind < 0.8
            ? `apikey=' OR 1=1--&apikey=${key}`
            : keyKind < 0.9
              ? `apikey=${key.toUpperCase()}`
              : `apikey=%00${key}`;
  if (query !== '') path += `?${query}`;
  return path;
}

const LEAKS: RegExp[] = [
  /\n\s+at\s/, // a stack frame
  /\b(SELECT|INSERT|UPDATE|DELETE)\b.*\b(FROM|INTO|SET)\b/i,
  /sqlite|SQLITE_|better-sqlite3|postgres/i,
  /\/work\/|node_modules|\/dist\/|\.ts:\d|\.js:\d/,
  /https?:\/\/127\.0\.0\.1/,
];

describe('hostile input', () => {
  test('thousands of malformed requests: no 5xx, every body an envelope, nothing leaks', async () => {
    const seed = chaosSeed('fuzz');
    const random = seededRandom(seed);
    const count = scaled(3_000, 20_000);
    const port = Number(new URL(fx.url).port);
    const failures: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const i = next++;
        const method = pick(random, METHODS);
        let path = hostilePath(random, fx.key);
        if (random() < 0.02)
          path = `/vipapi/eth/token/${USDC}?pad=${'p'.repeat(20_000 + Math.floor(random() * 50_000))}`;
        const answer = await rawRequest(port, `${method} ${path} HTTP/1.1`, method === 'POST' ? '{"x":' : '');
        const where = `#${i} ${method} ${path.slice(0, 120)}`;
        if (answer.status === 0 || answer.status >= 500) failures.push(`${where}: HTTP ${answer.status}`);
        if (method !== 'HEAD' && answer.body !== '') {
          // A supply's bare decimal number, or a {code, msg, data} envelope.
          let envelope = /^[0-9]+(\.[0-9]+)?$/.test(answer.body);
          if (!envelope)
            try {
              const parsed = JSON.parse(answer.body) as Record<string, unknown>;
              envelope =
                typeof parsed === 'object' &&
                parsed !== null &&
                'code' in parsed &&
                'msg' in parsed &&
                'data' in parsed;
            } catch {
              envelope = false;
            }
          if (!envelope) failures.push(`${where}: not an envelope: ${answer.body.slice(0, 120)}`);
        }
        for (const leak of LEAKS) {
          if (leak.test(answer.body))
            failures.push(`${where}: body leaks ${leak}: ${answer.body.slice(0, 200)}`);
        }
        if (answer.body.includes(fx.key)) failures.push(`${where}: body shows the key`);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    const logs = logLines.join('');
    assert.ok(!logs.includes(fx.key), 'a log line shows the API key');
    assert.doesNotMatch(logs, /\n\s+at\s.*\.(js|ts):\d/, 'a log line carries a stack trace');
    assert.deepEqual(failures.slice(0, 20), [], `${failures.length} failures (seed ${seed})`);
  });
});
