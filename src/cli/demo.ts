import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startApiServer } from '../api/server.js';
import { ENV, loadConfig } from '../config/load.js';
import { startAnvil } from '../devchain/anvil.js';
import { burnToken, type DeployedToken, deployDemoTokens, mintToken } from '../devchain/deploy.js';
import { sendTransfers } from '../devchain/traffic.js';
import { startIndexerWorker } from '../indexer/worker.js';
import { generateApiKey } from '../internal/api-keys.js';
import { sleep } from '../internal/async.js';
import { errorMessage } from '../internal/errors.js';
import { createLogger } from '../internal/logger.js';
import { onShutdown } from '../internal/shutdown.js';
import { openStore } from '../store/open.js';
import { assertCanListen, explainListenError } from './listen.js';

const out = (line = '') => process.stdout.write(`${line}\n`);

/**
 * `tokenquery demo`: a real local anvil chain from npm, four demo ERC-20s, live traffic, indexed
 * and served, with no network and nothing to configure.
 */
export async function demoCommand(
  raw: { port?: string; host?: string; db?: string; logLevel?: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  // Only the listening and logging variables apply: a TOKENQUERY_DB or TOKENQUERY_RPC set for a real
  // deployment must not send demo tokens into that store or index that node.
  const demoEnv = {
    [ENV.port]: env[ENV.port],
    [ENV.host]: env[ENV.host],
    [ENV.logLevel]: env[ENV.logLevel] || 'warn',
  };
  const db = raw.db ?? join('data', 'demo', `demo-${Date.now()}.sqlite`);
  // Everything the user gave is checked before anvil starts, so a mistake costs no start-up time.
  const settings = loadConfig({ ...raw, db }, demoEnv);
  await assertCanListen(settings.host, settings.port);
  // Private like the store's own folders (docs/api-keys.md): the demo store holds a key too.
  if (!raw.db) mkdirSync(join('data', 'demo'), { recursive: true, mode: 0o700 });
  const logger = createLogger({ level: settings.logLevel });

  out('Starting a local anvil chain (1 block per second) …');
  const anvil = await startAnvil({ blockTime: 1 });
  const config = loadConfig(
    {
      ...raw,
      db,
      rpc: [`eth=${anvil.url}`],
      // anvil serves its websocket on the HTTP port: blocks show in the API as soon as they are mined.
      ws: [`eth=${anvil.url.replace(/^http/, 'ws')}`],
      // A local chain reorgs only when told to; a short window keeps the demo's confirmations moving.
      finality: ['eth=5'],
      pollInterval: '200',
    },
    demoEnv,
  );

  const controller = new AbortController();
  const cleanup: (() => Promise<void>)[] = [() => anvil.stop()];
  onShutdown(logger, async () => {
    controller.abort();
    for (const step of cleanup.reverse()) await step().catch(() => {});
  });

  out('Deploying demo tokens …');
  const tokens = await deployDemoTokens(anvil.url);
  await sendTransfers(anvil.url, tokens, { count: 40, seed: 1 });

  const store = await openStore({ location: config.db, logger });
  cleanup.push(() => store.close());
  const { key, id, hash } = generateApiKey();
  await store.keys.createApiKey({ id, hash, label: 'demo', createdAt: Date.now(), revokedAt: null });

  const worker = startIndexerWorker(config);
  cleanup.push(() => worker.stop());
  const server = await startApiServer({
    store,
    logger,
    chains: ['eth'],
    host: config.host,
    port: config.port,
    rpcMetrics: worker.rpcMetrics,
  }).catch((error: unknown) => {
    throw explainListenError(error, config.host, config.port);
  });
  cleanup.push(() => server.close());

  printBanner(server.url, key, tokens, config.db);
  void traffic(anvil.url, tokens, controller.signal, logger);
}

function printBanner(url: string, key: string, tokens: DeployedToken[], db: string): void {
  const [standard, six, capped, bytes32] = [
    tokens.find((t) => t.kind === 'standard')!,
    tokens.find((t) => t.kind === 'six-decimals')!,
    tokens.find((t) => t.kind === 'capped')!,
    tokens.find((t) => t.kind === 'bytes32')!,
  ];
  out();
  out(`tokenquery demo is serving ${url} (store: ${db})`);
  out();
  out('Tokens on the local chain (eth):');
  for (const t of tokens)
    out(`  ${t.address}  ${t.symbol.padEnd(5)} ${String(t.decimals).padStart(2)} decimals  ${t.kind}`);
  out();
  out('Try:');
  out(`  curl '${url}/vipapi/eth/token/${standard.address}?apikey=${key}'`);
  out(`  curl '${url}/vipapi/eth/token/tokentrans/${six.address}/1/10?apikey=${key}'`);
  out(`  curl '${url}/vipapi/eth/tokens/1/10?apikey=${key}'`);
  out(`  curl '${url}/vipapi/token/totalsupply/eth/${six.address}?apikey=${key}'`);
  out(`  curl '${url}/vipapi/token/maxsupply/eth/${capped.address}?apikey=${key}'`);
  out(`  curl '${url}/vipapi/token/circulatingsupply/eth/${bytes32.address}?apikey=${key}'`);
  out(`  curl '${url}/status'`);
  out();
  out('Transfers keep flowing every second; Ctrl-C stops the demo. The API key (shown once):');
  out(key);
}

/** Live traffic: a few transfers every second, and now and then a mint or a burn. */
async function traffic(
  url: string,
  tokens: DeployedToken[],
  signal: AbortSignal,
  logger: ReturnType<typeof createLogger>,
) {
  for (let round = 2; !signal.aborted; round++) {
    try {
      await sendTransfers(url, tokens, { count: 4, seed: round, wait: false });
      const token = tokens[round % tokens.length]!;
      const unit = 10n ** BigInt(token.decimals);
      if (round % 10 === 0 && token.kind !== 'capped')
        await mintToken(url, token, { to: token.deployer, amount: 1000n * unit });
      if (round % 15 === 0) await burnToken(url, token, { amount: 10n * unit, from: token.deployer });
    } catch (error) {
      if (!signal.aborted) logger.warn({ err: errorMessage(error) }, 'demo traffic step failed');
    }
    await sleep(1000, signal);
  }
}
