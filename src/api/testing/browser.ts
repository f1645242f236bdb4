/**
 * Headless Chromium for the browser tests: Debian's `chromium` (npm's browser downloads cannot
 * run here) driven by playwright-core, with a fresh profile and no network beyond 127.0.0.1:
 * any other request is refused and recorded, so a page that needs a CDN fails its test.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/** The browser binary; `TOKENQUERY_CHROMIUM` overrides Debian's path. */
export const CHROMIUM_PATH = process.env.TOKENQUERY_CHROMIUM ?? '/usr/bin/chromium';

/** Flags that keep Chromium from reaching out on its own (updates, sync, QUIC, first-run pages). */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught page errors, in order. */
  errors: string[];
  /** Requests to anything but 127.0.0.1 (refused). */
  external: string[];
  close(): Promise<void>;
}

/** Launches Chromium with a fresh profile; throws one line on how to install it when it is missing. */
export async function openBrowser(): Promise<BrowserSession> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM_PATH}: install it with \`apt-get install -y chromium\` ` +
        '(or set TOKENQUERY_CHROMIUM to a Chromium binary)',
    );
  }
  const profile = mkdtempSync(join(tmpdir(), 'tq-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: ARGS,
      viewport: { width: 1280, height: 900 },
    });
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
  const errors: string[] = [];
  const external: string[] = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === '127.0.0.1' || url.protocol === 'data:' || url.protocol === 'blob:') {
      return route.continue();
    }
    external.push(url.href);
    return route.abort('blockedbyclient');
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  return {
    context,
    page,
    errors,
    external,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
