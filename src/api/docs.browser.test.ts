/**
 * `/docs` in headless Chromium, offline: Swagger UI loads from this server alone, lists the 13
 * Tokenview operations of docs/api.md (written out here), and a try-it call made with a key typed
 * into the Authorize dialog returns the fixture's data; without the key the same call answers
 * 401. The console shows no error but that 401.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { type BrowserSession, openBrowser } from './testing/browser.js';
import { type ApiFixture, startApiFixture, USDC } from './testing/fixture.js';

/** The operations of docs/api.md#evm-family and docs/api.md#neo-family as Swagger UI shows their paths. */
const SPEC_OPERATIONS = [
  '/vipapi/{chain}/token/{address}',
  '/vipapi/token/totalsupply/{chain}/{address}',
  '/vipapi/token/maxsupply/{chain}/{address}',
  '/vipapi/token/circulatingsupply/{chain}/{address}',
  '/vipapi/{chain}/token/tokentrans/{address}/{page}/{size}',
  '/vipapi/{chain}/tokens/{page}/{size}',
  '/vipapi/neo/token/{address}',
  '/vipapi/token/totalsupply/neo/{address}',
  '/vipapi/token/maxsupply/neo/{address}',
  '/vipapi/neo/token/tokentrans/{address}/{page}/{size}',
  '/vipapi/neo/asset/{address}',
  '/vipapi/tokens/neo/{page}/{size}',
  '/vipapi/contracts/neo/{page}/{size}',
];

const TIMEOUT = 20_000;

let fx: ApiFixture;
let browser: BrowserSession;

before(async () => {
  fx = await startApiFixture();
  browser = await openBrowser();
  browser.page.setDefaultTimeout(TIMEOUT);
});
after(async () => {
  await browser?.close();
  await fx?.close();
});

/** Runs Token Info's try-it with `address` and returns the status and body Swagger UI shows. */
async function tryTokenInfo(page: Page, address: string): Promise<{ status: string; body: string }> {
  const block = page.locator('#operations-EVM-evmTokenInfo');
  // Clear an earlier answer, so the one read below is this call's.
  const clear = block.locator('button.btn-clear');
  if (await clear.isVisible()) await clear.click();
  await block.locator('tr[data-param-name="chain"] select').selectOption('eth');
  await block.locator('tr[data-param-name="address"] input').fill(address);
  await block.locator('button.execute').click();
  const live = block.locator('.live-responses-table .response');
  await live.waitFor();
  return {
    status: ((await live.locator('.response-col_status').textContent()) ?? '').trim(),
    body: (await live.locator('.response-col_description .microlight').first().textContent()) ?? '',
  };
}

test('/docs lists every operation and its try-it calls work with a typed key', {
  timeout: 60_000,
}, async () => {
  const { page } = browser;
  await page.goto(`${fx.url}/docs`);
  await page.locator('.opblock').first().waitFor();

  const shown = await page
    .locator('.opblock-summary-path')
    .evaluateAll((els) => els.map((el) => el.getAttribute('data-path')));
  for (const path of SPEC_OPERATIONS) assert.ok(shown.includes(path), `${path} is not listed`);
  // The 13 operations and the 10 address and holder operations (docs/api.md).
  assert.equal(shown.filter((p) => p?.startsWith('/vipapi/')).length, 23);

  assert.deepEqual(browser.errors, [], 'console errors while loading');

  // Token Info, tried without a key: the server refuses it (Chromium logs the 401 response,
  // the only console error this test allows).
  await page.locator('#operations-EVM-evmTokenInfo .opblock-summary').click();
  await page.locator('#operations-EVM-evmTokenInfo button.try-out__btn').click();
  const refused = await tryTokenInfo(page, USDC);
  assert.equal(refused.status, '401');
  assert.match(refused.body, /"invalid apikey"/);
  assert.deepEqual(browser.errors.splice(0), [
    'console: Failed to load resource: the server responded with a status of 401 (Unauthorized)',
  ]);

  // The key typed into Authorize goes with every call from then on.
  await page.locator('.auth-wrapper button.authorize').click();
  const dialog = page.locator('.auth-container');
  await dialog.locator('input').fill(fx.key);
  await dialog.locator('button.authorize').click();
  await page.locator('.auth-btn-wrapper button.btn-done').click();

  const answered = await tryTokenInfo(page, USDC);
  assert.equal(answered.status, '200', answered.body);
  const body = JSON.parse(answered.body) as { code: number; data: { tokenInfo: { f: string; s: string } } };
  assert.equal(body.code, 1);
  assert.deepEqual([body.data.tokenInfo.f, body.data.tokenInfo.s], ['USD Coin', 'USDC']);
  // The request Swagger UI shows carries the key as the query parameter.
  const requestUrl = await page.locator('#operations-EVM-evmTokenInfo .request-url pre').textContent();
  assert.equal(requestUrl?.trim(), `${fx.url}/vipapi/eth/token/${USDC}?apikey=${fx.key}`);

  assert.deepEqual(browser.errors, [], 'console errors');
  assert.deepEqual(browser.external, [], 'requests beyond 127.0.0.1');
});
