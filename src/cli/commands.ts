import { startApiServer } from '../api/server.js';
import { createTokenOverlay, readTokenList, type TokenOverlay, withTokenOverlay } from '../api/token-list.js';
import type { Config } from '../config/types.js';
import { checkNodes, runIndexers } from '../indexer/run.js';
import { startIndexerWorker } from '../indexer/worker.js';
import { redactUrls, UserError } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import { onShutdown } from '../internal/shutdown.js';
import { openStore } from '../store/open.js';
import { splitReads } from '../store/read-split.js';
import type { ChainStatus, Store, WriterRole } from '../store/types.js';
import { assertCanListen, explainListenError } from './listen.js';

async function listen(options: Parameters<typeof startApiServer>[0]) {
  try {
    return await startApiServer(options);
  } catch (error) {
    // Which of the two listeners failed: the error names the address it could not take.
    const operator = options.operatorListen;
    if (typeof operator === 'object' && (error as { port?: unknown } | null)?.port === operator.port) {
      throw explainListenError(error, operator.host, operator.port, '--operator-listen');
    }
    throw explainListenError(error, options.host, options.port);
  }
}

/** Both listeners' addresses are free (see assertCanListen), and they are not one. */
async function assertCanListenAll(config: Config): Promise<void> {
  await assertCanListen(config.host, config.port);
  const operator = config.limits.operatorListen;
  if (typeof operator !== 'object') return;
  if (operator.port !== 0 && operator.port === config.port) {
    throw new UserError(`--operator-listen must use another port than the API's (${config.port})`);
  }
  await assertCanListen(operator.host, operator.port, '--operator-listen');
}

/** The operator listener's URL for the start line, when there is one. */
function operatorUrl(server: { operatorUrl?: string }) {
  return server.operatorUrl === undefined ? {} : { operatorUrl: server.operatorUrl };
}

/** Chains the API answers for: those configured with --rpc plus those already in the store. */
async function servedChains(config: Config, store: Store): Promise<string[]> {
  const names = new Set(config.chains.map((c) => c.name));
  for (const status of await store.reader.listChainStatuses()) names.add(status.chain as never);
  return [...names];
}

/**
 * SQLite page cache of the API's connection. The API reads pages the OS has cached anyway, and
 * 8 MiB holds the inner pages of a 10M-transfer store's trees; the default 32 MiB (sized for the
 * writer) only added to `serve`'s memory under load, not its speed (docs/benchmarks.md, Growth).
 */
const API_SQLITE_CACHE_KIB = 8 * 1024;

/**
 * The store the API reads: `--db`, or with `--db-read` the replica for chain data and `--db` for
 * API keys (read-split.ts). `mustExist` for `serve`: a mistyped `--db` must not become an empty
 * store that answers 404 for every token.
 */
async function openApiStore(config: Config, logger: Logger, mustExist: boolean): Promise<Store> {
  const primary = await openStore({
    location: config.db,
    logger,
    sqliteCacheKiB: API_SQLITE_CACHE_KIB,
    mustExist,
  });
  if (config.dbRead === undefined) return primary;
  try {
    const { openPostgresStore } = await import('../store/postgres/postgres-store.js');
    const replica = await openPostgresStore({ url: config.dbRead, logger, readOnly: true });
    logger.info('API reads chain data from the read replica (--db-read) and API keys from --db');
    return splitReads(primary, replica);
  } catch (error) {
    await primary.close();
    throw error;
  }
}

/**
 * `start` on a backend that elects writers: `/status` also shows whether this process's own
 * indexer is a chain's writer or a standby (`roles`, kept by the indexer worker).
 */
function withIndexerRoles(store: Store, roles: ReadonlyMap<string, WriterRole>): Store {
  const withRole = (status: ChainStatus): ChainStatus => {
    const role = roles.get(status.chain);
    return role === undefined ? status : { ...status, role };
  };
  const { reader } = store;
  return {
    ...store,
    reader: {
      ...reader,
      async getChainStatus(chain) {
        const status = await reader.getChainStatus(chain);
        return status === null ? null : withRole(status);
      },
      async listChainStatuses() {
        return (await reader.listChainStatuses()).map(withRole);
      },
    },
  };
}

/** `--token-list` files, read and checked before anything starts; a bad one stops the command. */
function loadTokenOverlay(config: Config, logger: Logger): TokenOverlay {
  const lists = config.tokenLists.map((path) => readTokenList(path));
  for (const list of lists) {
    logger.info(
      { list: list.source, name: list.name, version: list.version, tokens: list.entries.size },
      'token list loaded',
    );
  }
  return createTokenOverlay(lists);
}

function describeChains(config: Config) {
  return config.chains.map((c) => ({ chain: c.name, rpc: redactUrls(c.rpcUrl), fromBlock: c.fromBlock }));
}

/** `tokenquery start`: indexers in a worker thread, the API in this one. */
export async function startCommand(config: Config, logger: Logger): Promise<void> {
  await assertCanListenAll(config);
  const overlay = loadTokenOverlay(config, logger);
  await checkNodes(config.chains, logger);
  const store = await openApiStore(config, logger, false);
  const worker = startIndexerWorker(config);
  // Installed before the API starts listening: the indexer is already writing, and a SIGTERM in
  // between (seen in the shutdown scenario) would otherwise kill the process without stopping it.
  let server: Awaited<ReturnType<typeof listen>> | undefined;
  onShutdown(logger, async () => {
    await server?.close();
    await worker.stop();
    await store.close();
  });
  server = await listen({
    store: withIndexerRoles(withTokenOverlay(store, overlay), worker.roles),
    logger,
    chains: await servedChains(config, store),
    host: config.host,
    port: config.port,
    ...config.limits,
    ...config.http,
    rpcMetrics: worker.rpcMetrics,
  });
  logger.info(
    { url: server.url, ...operatorUrl(server), chains: describeChains(config) },
    'tokenquery started',
  );
  worker.done.catch((error: unknown) => {
    logger.error(
      { err: error instanceof Error ? error.message : String(error) },
      'indexer worker ended; API keeps serving',
    );
  });
}

/** `tokenquery serve`: only the API, reading what an `index` process writes. */
export async function serveCommand(config: Config, logger: Logger): Promise<void> {
  await assertCanListenAll(config);
  const overlay = loadTokenOverlay(config, logger);
  const store = await openApiStore(config, logger, true);
  const chains = await servedChains(config, store);
  if (chains.length === 0)
    logger.warn('no chains configured (--rpc) or indexed yet: every chain answers "unsupport coin"');
  const server = await listen({
    store: withTokenOverlay(store, overlay),
    logger,
    chains,
    host: config.host,
    port: config.port,
    ...config.limits,
    ...config.http,
  });
  logger.info({ url: server.url, ...operatorUrl(server), chains }, 'tokenquery serving');
  onShutdown(logger, async () => {
    await server.close();
    await store.close();
  });
}

/** `tokenquery index`: only the indexers, in this process. */
export async function indexCommand(config: Config, logger: Logger): Promise<void> {
  await checkNodes(config.chains, logger);
  const store = await openStore({ location: config.db, logger, writerThread: true });
  const controller = new AbortController();
  let finished: Promise<void> = Promise.resolve();
  onShutdown(logger, async () => {
    controller.abort();
    await finished;
    await store.close();
  });
  logger.info({ chains: describeChains(config) }, 'tokenquery indexing');
  finished = runIndexers({ chains: config.chains, store, logger, signal: controller.signal });
  await finished;
  if (!controller.signal.aborted) await store.close();
}
