// The Ponder side of the Ponder benchmark: the pinned packages installed into a cache directory
// of the benchmark's own (Ponder is not a dependency of the project), and the minimal Ponder app
// that does tokenquery's indexing work.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchChain } from './chain.js';

/** Exactly what is installed (issue #5); hono is Ponder's peer dependency for its HTTP server. */
export const PONDER_PACKAGES = { ponder: '1.0.0', viem: '2.40.0', hono: '4.7.4' } as const;

/**
 * Installs the pinned packages into `cacheDir` unless a finished install of them is there already.
 * Returns the seconds `npm install` took, or null when reused. Ponder's own dependencies resolve to
 * the newest versions its ranges allow on the day of the install.
 */
export async function ensurePonderInstalled(
  cacheDir: string,
  log: (line: string) => void,
): Promise<number | null> {
  const marker = join(cacheDir, '.installed.json');
  const wanted = JSON.stringify(PONDER_PACKAGES);
  if (existsSync(marker) && readFileSync(marker, 'utf8') === wanted) {
    log(`ponder: reusing ${cacheDir}`);
    return null;
  }
  rmSync(cacheDir, { recursive: true, force: true });
  mkdirSync(cacheDir, { recursive: true });
  writeFileSync(
    join(cacheDir, 'package.json'),
    `${JSON.stringify({ name: 'tokenquery-bench-ponder', private: true, type: 'module', dependencies: PONDER_PACKAGES }, null, 2)}\n`,
  );
  log(
    `ponder: npm install ${Object.entries(PONDER_PACKAGES)
      .map(([n, v]) => `${n}@${v}`)
      .join(' ')} into ${cacheDir}`,
  );
  const started = performance.now();
  // No install scripts: the only one in the tree is esbuild's check of its binary, which comes in
  // its platform package (npm 11 skips it by default anyway).
  await new Promise<void>((resolve, reject) => {
    execFile(
      'npm',
      ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--no-update-notifier', '--loglevel=error'],
      { cwd: cacheDir, maxBuffer: 16 * 2 ** 20, timeout: 900_000 },
      (error, _stdout, stderr) =>
        error ? reject(new Error(`npm install of Ponder failed: ${error.message}\n${stderr}`)) : resolve(),
    );
  });
  const seconds = (performance.now() - started) / 1000;
  writeFileSync(marker, wanted);
  log(`ponder: installed in ${seconds.toFixed(1)} s`);
  return seconds;
}

/**
 * A minimal Ponder app doing tokenquery's indexing work: every Transfer of the four demo tokens
 * stored (token, block, log index, transaction index and hash, from, to, value, block time), and
 * every holder's balance kept up to date (the zero address excluded, as tokenquery does).
 */
export function writePonderApp(appDir: string, cacheDir: string, chain: BenchChain): void {
  mkdirSync(join(appDir, 'src', 'api'), { recursive: true });
  symlinkSync(join(cacheDir, 'node_modules'), join(appDir, 'node_modules'), 'dir');
  writeFileSync(
    join(appDir, 'package.json'),
    '{ "name": "bench-ponder-app", "private": true, "type": "module" }\n',
  );
  const addresses = JSON.stringify(chain.tokens.map((t) => t.address));
  writeFileSync(
    join(appDir, 'ponder.config.ts'),
    `import { createConfig } from 'ponder';
import { http } from 'viem';

const transfer = {
  type: 'event',
  name: 'Transfer',
  inputs: [
    { indexed: true, name: 'from', type: 'address' },
    { indexed: true, name: 'to', type: 'address' },
    { indexed: false, name: 'value', type: 'uint256' },
  ],
} as const;

export default createConfig({
  networks: {
    // A local node has no rate limit: Ponder's default of 50 requests/s would throttle it.
    anvil: { chainId: 31337, transport: http('${chain.anvil.url}'), maxRequestsPerSecond: 100_000 },
  },
  contracts: { Token: { network: 'anvil', abi: [transfer], address: ${addresses}, startBlock: 0 } },
});
`,
  );
  writeFileSync(
    join(appDir, 'ponder.schema.ts'),
    `import { onchainTable, primaryKey } from 'ponder';

export const transfer = onchainTable(
  'transfer',
  (t) => ({
    token: t.hex().notNull(),
    blockNumber: t.bigint().notNull(),
    logIndex: t.integer().notNull(),
    txIndex: t.integer().notNull(),
    txHash: t.hex().notNull(),
    from: t.hex().notNull(),
    to: t.hex().notNull(),
    value: t.bigint().notNull(),
    time: t.bigint().notNull(),
  }),
  (table) => ({ pk: primaryKey({ columns: [table.token, table.blockNumber, table.logIndex] }) }),
);

export const balance = onchainTable(
  'balance',
  (t) => ({ token: t.hex().notNull(), holder: t.hex().notNull(), amount: t.bigint().notNull() }),
  (table) => ({ pk: primaryKey({ columns: [table.token, table.holder] }) }),
);
`,
  );
  writeFileSync(
    join(appDir, 'src', 'index.ts'),
    `import { ponder } from 'ponder:registry';
import { balance, transfer } from 'ponder:schema';

const ZERO = '0x0000000000000000000000000000000000000000';

ponder.on('Token:Transfer', async ({ event, context }) => {
  const token = event.log.address;
  const { from, to, value } = event.args;
  await context.db.insert(transfer).values({
    token,
    blockNumber: event.block.number,
    logIndex: event.log.logIndex,
    txIndex: event.transaction.transactionIndex,
    txHash: event.transaction.hash,
    from,
    to,
    value,
    time: event.block.timestamp,
  });
  if (from !== ZERO) {
    await context.db
      .insert(balance)
      .values({ token, holder: from, amount: -value })
      .onConflictDoUpdate((row) => ({ amount: row.amount - value }));
  }
  if (to !== ZERO) {
    await context.db
      .insert(balance)
      .values({ token, holder: to, amount: value })
      .onConflictDoUpdate((row) => ({ amount: row.amount + value }));
  }
});
`,
  );
  // Ponder 1.0 requires an API file; this one answers the benchmark's check of what was stored.
  writeFileSync(
    join(appDir, 'src', 'api', 'index.ts'),
    `import { db } from 'ponder:api';
import { balance, transfer } from 'ponder:schema';
import { count, gt } from 'ponder';
import { Hono } from 'hono';

const app = new Hono();
app.get('/bench-counts', async (c) => {
  const [transfers] = await db.select({ n: count() }).from(transfer);
  const [holders] = await db.select({ n: count() }).from(balance).where(gt(balance.amount, 0n));
  return c.json({ transfers: transfers?.n ?? 0, holders: holders?.n ?? 0 });
});
export default app;
`,
  );
}
