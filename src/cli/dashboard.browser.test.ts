/**
 * The status dashboard in headless Chromium, while `tokenquery start` (the real CLI, its indexer
 * in a worker thread) follows a live local anvil chain that keeps receiving transfers: the page
 * shows progress that moves, the demo tokens ranked by holders, the newest transfers and the
 * throughput chart, with no console error and no request beyond this machine. It saves the
 * screenshot the README shows (docs/dashboard.png). The same process's `/metrics` carries the
 * indexer's RPC figures, which cross from the worker thread.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { type BrowserSession, openBrowser } from '../api/testing/browser.js';
import { type AnvilInstance, startAnvil } from '../devchain/anvil.js';
import { type DeployedToken, deployDemoTokens } from '../devchain/deploy.js';
import { sendTransfers } from '../devchain/traffic.js';
import { parsePrometheusText, sampleValue } from '../internal/testing/prometheus.js';
import {
  apiUrl,
  type CliProcess,
  eventually,
  getJson,
  removeTempDirs,
  spawnCli,
  tempDir,
} from './testing/cli-process.js';

/** dist/src/cli/ → the repository's docs/. */
// The README's screenshot is refreshed only when asked (TOKENQUERY_SCREENSHOT=1), so that a test
// run leaves the working tree clean; otherwise the screenshot is still taken, into a temp dir.
const SCREENSHOT =
  process.env.TOKENQUERY_SCREENSHOT === '1'
    ? fileURLToPath(new URL('../../../docs/dashboard.png', import.meta.url))
    : join(tmpdir(), `tokenquery-dashboard-${process.pid}.png`);
const TIMEOUT = 30_000;

let anvil: AnvilInstance;
let tokens: DeployedToken[];
let cli: CliProcess;
let base: string;
let browser: BrowserSession;
const traffic = new AbortController();
let trafficDone: Promise<void> = Promise.resolve();

/** A few transfers every half second (automine: each one is a block), until the test ends. */
async function keepTransferring(signal: AbortSignal): Promise<void> {
  for (let round = 100; !signal.aborted; round++) {
    await sendTransfers(anvil.url, tokens, { count: 3, seed: round });
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

before(async () => {
  anvil = await startAnvil();
  tokens = await deployDemoTokens(anvil.url);
  await sendTransfers(anvil.url, tokens, { count: 24, seed: 11 });
  const db = join(tempDir(), 'dashboard.sqlite');
  cli = spawnCli(['start', '--rpc', `eth=${anvil.url}`, '--db', db, '--port', '0', '--poll-interval', '200']);
  base = await apiUrl(cli, 'tokenquery started');
  trafficDone = keepTransferring(traffic.signal);
  browser = await openBrowser();
  browser.page.setDefaultTimeout(TIMEOUT);
});

after(async () => {
  traffic.abort();
  await trafficDone.catch(() => {});
  await browser?.close();
  await cli?.stop('SIGTERM');
  await anvil?.stop();
  removeTempDirs();
});

/** The number a chain card shows in a field (`1,234` → 1234); NaN while it shows none. */
async function field(page: Page, name: string): Promise<number> {
  const text = (await page.locator(`[data-chain="eth"] [data-field="${name}"]`).textContent()) ?? '';
  return text === '' ? Number.NaN : Number(text.replaceAll(',', ''));
}

/** Polls the page until `probe` holds. */
async function until(page: Page, probe: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + TIMEOUT;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`the dashboard never showed ${what}`);
    await page.waitForTimeout(250);
  }
}

describe('dashboard in a browser, over a live chain', () => {
  test('shows live progress, the tokens, the newest transfers and the chart, without console errors', async () => {
    const { page } = browser;
    await page.goto(`${base}/`);
    await until(page, async () => (await field(page, 'indexed')) > 0, 'an indexed block');
    const first = await field(page, 'indexed');
    await until(page, async () => (await field(page, 'indexed')) > first, 'the indexed block moving');
    assert.ok((await field(page, 'head')) >= (await field(page, 'indexed')));
    await until(page, async () => (await field(page, 'blocksPerSecond')) > 0, 'a block rate');
    await until(page, async () => (await field(page, 'transfers')) > 24, 'the transfer count');

    // The four demo tokens, ranked by holders; the newest transfers, addresses shortened.
    const tokenRows = page.locator('#tokens tbody tr.token');
    await until(page, async () => (await tokenRows.count()) === tokens.length, 'every demo token');
    const symbols = await page.locator('#tokens tbody tr.token td:nth-child(2)').allTextContents();
    assert.deepEqual([...symbols].sort(), tokens.map((t) => t.symbol).sort());
    // The first token's top holders below the list; selecting another token shows its own.
    const caption = page.locator('#tokens table.holders caption');
    await until(
      page,
      async () => (await page.locator('#tokens table.holders tbody tr').count()) > 0,
      'holders',
    );
    assert.equal(await caption.textContent(), `Top holders of ${symbols[0]}`);
    assert.match(
      (await page.locator('#tokens table.holders tbody tr').first().locator('td').nth(1).textContent()) ?? '',
      /^0x[0-9a-f]{4}…[0-9a-f]{4}$/,
    );
    await tokenRows.nth(1).click();
    await until(
      page,
      async () => (await caption.textContent()) === `Top holders of ${symbols[1]}`,
      'the other holders',
    );
    const transferRows = page.locator('#transfers tbody tr');
    await until(page, async () => (await transferRows.count()) > 0, 'transfers');
    assert.match(
      (await transferRows.first().locator('td').nth(3).textContent()) ?? '',
      /^0x[0-9a-f]{4}…[0-9a-f]{4}$/,
    );

    // uPlot drew into its canvas, and the badge says the data is live.
    assert.equal(await page.locator('#chart .uplot canvas').count(), 1);
    assert.match((await page.locator('#live').textContent()) ?? '', /^live/);

    // A few more seconds of throughput for the chart in the screenshot.
    await page.waitForTimeout(6000);
    mkdirSync(join(SCREENSHOT, '..'), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    assert.deepEqual(browser.errors, [], 'console errors');
    assert.deepEqual(browser.external, [], 'requests beyond this machine');
  });

  test("/metrics shows the worker's RPC calls and the chain as /status does", async () => {
    const families = await eventually(
      async () => {
        const text = await (await fetch(`${base}/metrics`)).text();
        const parsed = parsePrometheusText(text);
        const calls = sampleValue(parsed, 'tokenquery_rpc_calls_total', {
          chain: 'eth',
          method: 'eth_getLogs',
        });
        return calls !== undefined && calls > 0 ? parsed : undefined;
      },
      10_000,
      'RPC figures in /metrics',
    );
    assert.ok(
      (sampleValue(families, 'tokenquery_rpc_calls_total', { chain: 'eth', method: 'eth_blockNumber' }) ??
        0) > 0,
    );
    assert.ok(
      (sampleValue(families, 'tokenquery_rpc_request_duration_seconds_count', {
        chain: 'eth',
        method: 'eth_getLogs',
      }) ?? 0) > 0,
    );
    const status = (await getJson(`${base}/status`)).body.chains as Record<string, { indexed: number }>;
    const indexed = sampleValue(families, 'tokenquery_chain_indexed_block', { chain: 'eth' }) ?? 0;
    // Read a moment apart from a moving chain: within a few blocks of each other.
    assert.ok(Math.abs(status.eth!.indexed - indexed) <= 10, `${status.eth!.indexed} vs ${indexed}`);
    assert.ok((sampleValue(families, 'tokenquery_chain_transfers_indexed', { chain: 'eth' }) ?? 0) > 24);
  });
});
