/**
 * The chaos proxy itself, in front of a real anvil: each fault it claims to inject reaches a plain
 * HTTP client as described, and the lagging view answers like a node some blocks behind.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type AnvilInstance, startAnvil } from '../../../devchain/anvil.js';
import { getBlockNumber } from '../../../devchain/chain.js';
import { deployDemoTokens } from '../../../devchain/deploy.js';
import { sendTransfers } from '../../../devchain/traffic.js';
import { type ChaosFaultRates, type ChaosProxyOptions, startChaosProxy } from './chaos-proxy.js';

let anvil: AnvilInstance;
let head: number;

before(async () => {
  anvil = await startAnvil();
  const tokens = await deployDemoTokens(anvil.url);
  await sendTransfers(anvil.url, tokens, { count: 12, seed: 2 });
  head = await getBlockNumber(anvil.url);
});

after(async () => {
  await anvil?.stop();
});

const hex = (n: number) => `0x${n.toString(16)}`;
const call = (method: string, params: unknown[] = []) => ({ jsonrpc: '2.0', id: 7, method, params });
const logsOf = (from: number, to: number) =>
  call('eth_getLogs', [{ fromBlock: hex(from), toBlock: hex(to) }]);

/** Posts `body` through a fresh proxy with `options`; the outcome as the client saw it. */
async function through(options: Omit<ChaosProxyOptions, 'target'>, body: unknown) {
  const proxy = await startChaosProxy({ target: anvil.url, ...options });
  try {
    const response = await fetch(proxy.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, text, headers: response.headers, stats: proxy.stats };
  } catch (error) {
    return { failed: String((error as { cause?: unknown }).cause ?? error), stats: proxy.stats };
  } finally {
    await proxy.close();
  }
}

describe('chaos proxy', () => {
  test('without faults it answers what the node answers', async () => {
    const out = await through({}, call('eth_blockNumber'));
    assert.ok('status' in out && out.status === 200);
    assert.equal(JSON.parse(out.text!).result, hex(head));
  });

  const cases: [keyof ChaosFaultRates, (out: Awaited<ReturnType<typeof through>>) => void][] = [
    [
      'http429',
      (out) => {
        assert.ok('status' in out && out.status === 429);
        assert.equal(out.headers?.get('retry-after'), '0');
      },
    ],
    ['http503', (out) => assert.ok('status' in out && out.status === 503)],
    ['drop', (out) => assert.ok('failed' in out, 'the connection was not dropped')],
    ['dropMidBody', (out) => assert.ok('failed' in out, 'the body was not cut')],
    ['malformed', (out) => assert.throws(() => JSON.parse('text' in out ? out.text! : ''))],
    [
      'tooManyResults',
      (out) => assert.match('text' in out ? out.text! : '', /query returned more than 10000 results/),
    ],
    ['rangeTooLarge', (out) => assert.match('text' in out ? out.text! : '', /block range is too large/)],
  ];
  for (const [fault, check] of cases) {
    test(`${fault} reaches the client`, async () => {
      const out = await through({ faults: { [fault]: 1 } }, logsOf(0, head));
      check(out);
      assert.equal(out.stats.faults[fault], 1);
    });
  }

  test('a slow answer arrives after the delay, intact', async () => {
    const started = Date.now();
    const out = await through({ faults: { slow: 1 }, slowMs: 200 }, call('eth_blockNumber'));
    assert.ok(Date.now() - started >= 200);
    assert.equal(JSON.parse('text' in out ? out.text! : '').result, hex(head));
  });

  test('calls of a batch are refused one by one as rate-limited', async () => {
    const out = await through({ faults: { batchItemRateLimit: 1 } }, [
      { ...call('eth_blockNumber'), id: 1 },
      { ...call('eth_chainId'), id: 2 },
    ]);
    const answers = JSON.parse('text' in out ? out.text! : '') as { error?: { message: string } }[];
    assert.equal(answers.length, 2);
    assert.ok(answers.every((a) => /rate limit/.test(a.error?.message ?? '')));
  });

  test('fixed limits refuse a wide span and a large answer like a provider', async () => {
    const wide = await through({ limits: { maxBlockRange: 3 } }, logsOf(0, head));
    assert.match('text' in wide ? wide.text! : '', /maximum is 3 blocks/);
    const many = await through({ limits: { maxResults: 2 } }, logsOf(0, head));
    assert.match('text' in many ? many.text! : '', /query returned more than 2 results/);
    const fine = await through({ limits: { maxBlockRange: 3, maxResults: 1000 } }, logsOf(head - 2, head));
    assert.ok(Array.isArray(JSON.parse('text' in fine ? fine.text! : '').result));
  });

  test('the lagging view is a node some blocks behind: lower head, no newer blocks, logs cut at its head', async () => {
    const lag = { lag: { blocks: 3, share: 1 } };
    const number = await through(lag, call('eth_blockNumber'));
    assert.equal(JSON.parse('text' in number ? number.text! : '').result, hex(head - 3));
    const block = await through(lag, call('eth_getBlockByNumber', [hex(head), false]));
    assert.equal(JSON.parse('text' in block ? block.text! : '').result, null);
    const state = await through(
      lag,
      call('eth_call', [{ to: `0x${'00'.repeat(20)}`, data: '0x' }, hex(head)]),
    );
    assert.match('text' in state ? state.text! : '', /header not found/);
    const full = JSON.parse((await fetchLogs(0, head)).text).result as { blockNumber: string }[];
    const cut = JSON.parse(((await through(lag, logsOf(0, head))) as { text: string }).text).result as {
      blockNumber: string;
    }[];
    assert.ok(
      full.some((l) => Number.parseInt(l.blockNumber, 16) > head - 3),
      'the newest blocks hold logs',
    );
    assert.deepEqual(
      cut,
      full.filter((l) => Number.parseInt(l.blockNumber, 16) <= head - 3),
      'logs past the lagging head are left out silently',
    );
  });

  test('an outage answers 503 to everything', async () => {
    const proxy = await startChaosProxy({ target: anvil.url });
    try {
      proxy.setOutage(true);
      const response = await fetch(proxy.url, { method: 'POST', body: JSON.stringify(call('eth_chainId')) });
      assert.equal(response.status, 503);
      proxy.setOutage(false);
      const back = await fetch(proxy.url, { method: 'POST', body: JSON.stringify(call('eth_chainId')) });
      assert.equal(back.status, 200);
      assert.equal(proxy.faultCount(), 1);
    } finally {
      await proxy.close();
    }
  });
});

async function fetchLogs(from: number, to: number) {
  const response = await fetch(anvil.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(logsOf(from, to)),
  });
  return { text: await response.text() };
}
