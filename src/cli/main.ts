import { Command, Option } from 'commander';
import { API_LIMIT_ENV } from '../config/api-limits.js';
import { CONFIG_ENV, CONFIG_FILE_NAME, findConfigFile } from '../config/file.js';
import { HTTP_LIMIT_ENV } from '../config/http-limits.js';
import { DEFAULTS, ENV, loadConfig, loadStoreLocation, type RawOptions } from '../config/load.js';
import { ProblemsError, redactUrls, TokenqueryError, UserError } from '../internal/errors.js';
import { HTTP_LIMIT_DEFAULTS } from '../internal/http-limits.js';
import { createLogger } from '../internal/logger.js';
import { indexCommand, serveCommand, startCommand } from './commands.js';
import { IMPORT_HELP, type ImportRawOptions, importCommand } from './import.js';
import { type KeyLimitOptions, keysCreate, keysList, keysRevoke, keysSet } from './keys.js';
import { VERIFY_HELP, type VerifyRawOptions, verifyCommand } from './verify.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `--config`: every command that reads the settings takes it. */
const configOption = () =>
  new Option(
    '--config <path>',
    `config file (default ./${CONFIG_FILE_NAME} when present; flags and environment win over it) [env ${CONFIG_ENV}]`,
  );

/** The options shared by start, serve and index (demo has its own few). */
function withNodeOptions(command: Command): Command {
  return command
    .addOption(configOption())
    .addOption(
      new Option(
        '--rpc <chain=url>',
        `JSON-RPC endpoint of a chain's node, repeatable (chains: eth, bsc, kcs, movr, neo) [env ${ENV.rpc}]`,
      ).argParser(collect),
    )
    .addOption(
      new Option(
        '--ws <chain=url>',
        `websocket endpoint of an EVM chain's node (ws:// or wss://), repeatable: new blocks are indexed as soon as eth_subscribe newHeads announces them; polling stays as the fallback (default none: polling only) [env ${ENV.ws}]`,
      ).argParser(collect),
    )
    .addOption(
      new Option(
        '--from-block <chain=n>',
        `first block to index for a chain, repeatable (default ${DEFAULTS.fromBlock}) [env ${ENV.fromBlock}]`,
      ).argParser(collect),
    )
    .addOption(
      new Option(
        '--finality <chain=n>',
        `unfinalized window in blocks, where reorgs are handled (default ${DEFAULTS.finalityDepth}; ignored for neo, final at once) [env ${ENV.finality}]`,
      ).argParser(collect),
    )
    .option('--db <path|postgres://...>', `SQLite file (default ${DEFAULTS.db}) [env ${ENV.db}]`)
    .option('--port <n>', `API port (default ${DEFAULTS.port}; 0 = any free port) [env ${ENV.port}]`)
    .option('--host <addr>', `API listen address (default ${DEFAULTS.host}) [env ${ENV.host}]`)
    .option(
      '--poll-interval <ms>',
      `head polling interval once caught up, also the fallback with --ws (default ${DEFAULTS.pollIntervalMs}) [env ${ENV.pollInterval}]`,
    )
    .option(
      '--log-level <level>',
      `fatal|error|warn|info|debug|trace|silent (default info) [env ${ENV.logLevel}]`,
    );
}

/** `error: unknown option '--pot'\n(Did you mean --port?)\n` → `tokenquery: unknown option '--pot' (did you mean --port?); see --help`. */
function usageLine(text: string): string {
  const parts = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => line.replace(/^error: /, '').replace(/^\(Did you mean/, '(did you mean'));
  return `tokenquery: ${redactUrls(parts.join(' '))}; see --help`;
}

function setup(raw: RawOptions & { config?: string }) {
  const config = loadConfig(raw, process.env, findConfigFile(raw.config));
  return { config, logger: createLogger({ level: config.logLevel }) };
}

/** `--db` for `keys`: flag, environment, then the config file. */
const keysStore = (raw: { db?: string; config?: string }) =>
  loadStoreLocation(raw, process.env, findConfigFile(raw.config));

/** `keys` output is for people and scripts on stdout; only warnings belong on stderr. */
const keysLogger = () => createLogger({ level: 'warn' });

const program = new Command()
  .name('tokenquery')
  .description(
    "Self-hosted token data API, compatible with Tokenview's /vipapi/, fed by your own chain nodes.\n" +
      'Quick start without any node: `tokenquery demo`.',
  )
  // A usage mistake is one line (commander's own text, with its "did you mean" hint folded in) and exit 2,
  // like every other user error; help asked for exits 0.
  .configureOutput({ outputError: (text, write) => write(`${usageLine(text)}\n`) })
  .exitOverride((error) =>
    process.exit(error.exitCode === 0 || error.code === 'commander.help' ? error.exitCode : 2),
  );

/** `--reconcile` for the commands that index (docs/reliability.md, "Reconcile mode"). */
const reconcileOption = () =>
  new Option(
    '--reconcile',
    `reconcile mode: read balanceOf of the holders that logs name of tokens whose balances move without a log (rebasing, shares, reflection, fee-taking) and correct their stored balances; costs node calls (docs/reliability.md) (default off) [env ${ENV.reconcile}]`,
  );

/** `--db-read` for the commands that serve the API. */
const dbReadOption = () =>
  new Option(
    '--db-read <postgres://...>',
    `read replica of the --db PostgreSQL database for the API's chain data; keys are read from --db [env ${ENV.dbRead}]`,
  );

/** `--token-list` for the commands that serve the API. */
const tokenListOption = () =>
  new Option(
    '--token-list <file>',
    `Uniswap-style token list: fills icons (ic) and empty names and symbols; repeatable [env ${ENV.tokenList}]`,
  ).argParser(collect);

/** Rate-limit and allow-list options of the commands that serve the API (docs/api-keys.md). */
function withApiLimitOptions(command: Command): Command {
  return command
    .option(
      '--rate-limit <rate>',
      `rate limit of keys without their own, e.g. 10/s, 600/min (default unlimited) [env ${API_LIMIT_ENV.rateLimit}]`,
    )
    .option(
      '--rate-burst <n>',
      `requests a key may make at once under --rate-limit (default: one second's worth) [env ${API_LIMIT_ENV.rateBurst}]`,
    )
    .option(
      '--redis <redis://...>',
      `share rate-limit state between API replicas through Redis (default: per process) [env ${API_LIMIT_ENV.redis}]`,
    )
    .option(
      '--trust-proxy <cidrs>',
      `believe X-Forwarded-For from these proxies (addresses or CIDRs, comma-separated), for key allow-lists (default: never) [env ${API_LIMIT_ENV.trustProxy}]`,
    )
    .option(
      '--trust-proxy-any',
      `let --trust-proxy take ranges that cover public addresses (wider than /8, IPv6 /16), refused otherwise [env ${API_LIMIT_ENV.trustProxyAny}]`,
    )
    .option(
      '--operator-listen <host:port|same|off>',
      `where /metrics, the dashboard and the docs are served: same (default: beside the API), off, or a listener of their own, e.g. 127.0.0.1:9090 [env ${API_LIMIT_ENV.operatorListen}]`,
    )
    .option(
      '--anonymous-rate-limit <rate>',
      `per client address: requests without a key or with a failed one, e.g. 10/s, 600/min, or off (default 10/s) [env ${API_LIMIT_ENV.anonymousRateLimit}]`,
    );
}

/** Slow-client limits of the commands that serve the API (docs/reliability.md). */
function withHttpLimitOptions(command: Command): Command {
  const d = HTTP_LIMIT_DEFAULTS;
  return command
    .option(
      '--request-timeout <ms>',
      `cut off a request (headers and body) that takes longer to arrive (default ${d.requestTimeoutMs}) [env ${HTTP_LIMIT_ENV.requestTimeout}]`,
    )
    .option(
      '--headers-timeout <ms>',
      `answer 408 to a request whose headers take longer to arrive (default ${d.headersTimeoutMs}) [env ${HTTP_LIMIT_ENV.headersTimeout}]`,
    )
    .option(
      '--idle-timeout <ms>',
      `close a connection without traffic for this long (default ${d.idleTimeoutMs}) [env ${HTTP_LIMIT_ENV.idleTimeout}]`,
    )
    .option(
      '--max-connections <n>',
      `close connections beyond this many at once (default ${d.maxConnections}) [env ${HTTP_LIMIT_ENV.maxConnections}]`,
    );
}

withHttpLimitOptions(withApiLimitOptions(withNodeOptions(program.command('start'))))
  .addOption(reconcileOption())
  .addOption(dbReadOption())
  .addOption(tokenListOption())
  .description('index the configured chains and serve the API, in one process')
  .addHelpText(
    'after',
    '\nExample:\n  tokenquery start --rpc eth=http://127.0.0.1:8545 --from-block eth=17000000 --port 8080',
  )
  .action(async (raw: RawOptions) => {
    const { config, logger } = setup(raw);
    if (config.chains.length === 0)
      throw new UserError('nothing to index: give at least one --rpc <chain>=<url>');
    await startCommand(config, logger);
  });

withHttpLimitOptions(withApiLimitOptions(withNodeOptions(program.command('serve'))))
  .addOption(dbReadOption())
  .addOption(tokenListOption())
  .description('serve the API only, from a store that an `index` process fills')
  .action(async (raw: RawOptions) => {
    const { config, logger } = setup(raw);
    await serveCommand(config, logger);
  });

withNodeOptions(program.command('index'))
  .addOption(reconcileOption())
  .description(
    'run the indexers only (no API); on PostgreSQL, index processes elect one writer per chain (the others stand by)',
  )
  .action(async (raw: RawOptions) => {
    const { config, logger } = setup(raw);
    if (config.chains.length === 0)
      throw new UserError('nothing to index: give at least one --rpc <chain>=<url>');
    await indexCommand(config, logger);
  });

program
  .command('verify')
  .description(
    'recompute counts and balances from the stored transfers, compare them with the store and (with --rpc) the node; exit 1 on any difference',
  )
  .option('--db <path|postgres://...>', `store (default ${DEFAULTS.db}) [env ${ENV.db}]`)
  .addOption(configOption())
  .addOption(
    new Option('--rpc <chain=url>', `node to compare balanceOf with [env ${ENV.rpc}]`).argParser(collect),
  )
  .option('--chain <name>', 'chain to verify', 'eth')
  .option('--sample <n>', 'holders per token compared with the node (largest first)', '20')
  .option(
    '--address-sample <n>',
    'per token, the transfer lists of at most 2n+1 addresses are compared (largest holders first)',
    '10',
  )
  .addOption(new Option('--token <address>', 'verify only this token (repeatable)').argParser(collect))
  .option('--json', 'print the report as one JSON object')
  .option(
    '--log-level <level>',
    `fatal|error|warn|info|debug|trace|silent (default info) [env ${ENV.logLevel}]`,
  )
  .addHelpText('after', VERIFY_HELP)
  .action(async (raw: VerifyRawOptions) => {
    await verifyCommand(raw);
  });

program
  .command('import')
  .description(
    'load ERC-20 transfers from ethereum-etl / BigQuery token_transfers exports (CSV or JSON lines, gzip or not)',
  )
  .argument('<files...>', 'export files, in any order; - reads standard input')
  .option('--db <path|postgres://...>', `store (default ${DEFAULTS.db}) [env ${ENV.db}]`)
  .addOption(configOption())
  .addOption(
    new Option(
      '--rpc <chain=url>',
      `node for block times, transaction positions and token metadata [env ${ENV.rpc}]`,
    ).argParser(collect),
  )
  .option('--chain <name>', 'chain the export is from', 'eth')
  .option('--format <csv|jsonl>', 'input format (default: detected per file)')
  .option('--sorted', 'the input is already in chain order: skip the sort file (the order is checked)')
  .option('--from-block <n>', 'first block the export covers (default: the block of its first row)')
  .option('--to-block <n>', 'last block the export covers (default: the block of its last row)')
  .option(
    '--tmp-dir <dir>',
    "directory for the sort file and SQLite's temporary files (default: the directory of --db)",
  )
  .option('--finality <n>', `unfinalized window in blocks (default ${DEFAULTS.finalityDepth})`)
  .option(
    '--batch-transfers <n>',
    'transfers per committed batch (default 20000): larger batches import faster and use more memory',
  )
  .option(
    '--log-level <level>',
    `fatal|error|warn|info|debug|trace|silent (default info) [env ${ENV.logLevel}]`,
  )
  .addHelpText('after', IMPORT_HELP)
  .action(async (files: string[], raw: ImportRawOptions) => {
    await importCommand(files, raw);
  });

const KEY_RATE_OPTION = [
  '--rate <rate>',
  "the key's rate limit: 10/s, 600/min, 3600/h, unlimited, or default (the server's --rate-limit; the default)",
] as const;
const KEY_BURST_OPTION = [
  '--burst <n>',
  "requests the key may make at once (default: one second's worth of --rate, at least 1)",
] as const;
const keyAllowIpOption = () =>
  new Option(
    '--allow-ip <cidr>',
    'allow calls only from this address or network (IPv4 or IPv6 CIDR); repeatable; others get 401',
  ).argParser(collect);

const keys = program.command('keys').description('manage API keys (stored only as SHA-256 hashes)');
keys
  .command('create')
  .description('create a key; it is printed once, alone on the last line of standard output')
  .option('--label <text>', 'a note to recognise the key by', '')
  .option('--db <path|postgres://...>', `store (default ${DEFAULTS.db}) [env ${ENV.db}]`)
  .addOption(configOption())
  .option(...KEY_RATE_OPTION)
  .option(...KEY_BURST_OPTION)
  .addOption(keyAllowIpOption())
  .action(async (raw: KeyLimitOptions & { label: string; db?: string; config?: string }) => {
    await keysCreate(keysStore(raw), raw.label, raw, keysLogger());
  });
keys
  .command('set <key-or-id>')
  .description(
    "change a key's rate limit or allow-list (settings not given stay); running servers apply it within one second",
  )
  .option('--db <path|postgres://...>', `store (default ${DEFAULTS.db}) [env ${ENV.db}]`)
  .addOption(configOption())
  .option(...KEY_RATE_OPTION)
  .option(...KEY_BURST_OPTION)
  .addOption(keyAllowIpOption())
  .option('--any-ip', 'remove the allow-list: the key works from any address')
  .action(async (keyOrId: string, raw: KeyLimitOptions & { db?: string; config?: string }) => {
    await keysSet(keysStore(raw), keyOrId, raw, keysLogger());
  });
keys
  .command('list')
  .description('list keys: id, status, creation time, label (never the key)')
  .option('--db <path|postgres://...>', `store (default ${DEFAULTS.db}) [env ${ENV.db}]`)
  .addOption(configOption())
  .action(async (raw: { db?: string; config?: string }) => {
    await keysList(keysStore(raw), keysLogger());
  });
keys
  .command('revoke <key-or-id>')
  .description('revoke a key by its id or its value; running servers refuse it within one second')
  .option('--db <path|postgres://...>', `store (default ${DEFAULTS.db}) [env ${ENV.db}]`)
  .addOption(configOption())
  .action(async (keyOrId: string, raw: { db?: string; config?: string }) => {
    await keysRevoke(keysStore(raw), keyOrId, keysLogger());
  });

/** Set while `config check` runs: its problems are listed in full. */
let configCheck = false;
const configCommand = program
  .command('config')
  .description(`check the configuration (flags, environment, ${CONFIG_FILE_NAME}) or print its JSON Schema`);
withHttpLimitOptions(withApiLimitOptions(withNodeOptions(configCommand.command('check'))))
  .addOption(dbReadOption())
  .addOption(tokenListOption())
  .description(
    'validate the effective configuration and its token lists; print it as JSON with secrets redacted, or one line per problem',
  )
  .action(async (raw: RawOptions & { config?: string }) => {
    configCheck = true;
    const { configCheckCommand } = await import('./config-check.js');
    configCheckCommand(raw);
  });
configCommand
  .command('schema')
  .description(`print the JSON Schema of ${CONFIG_FILE_NAME} (also in docs/tokenquery.config.schema.json)`)
  .action(async () => {
    const { configSchemaCommand } = await import('./config-check.js');
    configSchemaCommand();
  });

program
  .command('demo')
  .description(
    'start a local anvil chain from npm, deploy demo ERC-20s, keep transferring, index and serve it',
  )
  .option('--port <n>', `API port (default ${DEFAULTS.port}; 0 = any free port) [env ${ENV.port}]`)
  .option('--host <addr>', `API listen address (default ${DEFAULTS.host}) [env ${ENV.host}]`)
  .option('--db <path>', `SQLite file (default: a fresh file under ./data/demo/; ${ENV.db} is ignored)`)
  .option(
    '--log-level <level>',
    `fatal|error|warn|info|debug|trace|silent (default warn) [env ${ENV.logLevel}]`,
  )
  .addHelpText(
    'after',
    `\nThe demo ignores ${ENV.rpc}, ${ENV.fromBlock} and ${ENV.finality}: it indexes only its own chain.`,
  )
  .action(async (raw: { port?: string; host?: string; db?: string; logLevel?: string }) => {
    const { demoCommand } = await import('./demo.js');
    await demoCommand(raw);
  });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  // A user error is one clear line and exit 2; anything else one line and exit 1.
  // TOKENQUERY_DEBUG=1 shows the stack for bug reports.
  const message =
    error instanceof TokenqueryError
      ? error.shortMessage
      : error instanceof Error
        ? error.message
        : String(error);
  // Several problems found at once (a config file, a token list): `config check` lists them all,
  // one line each; any other command shows the first, and says where to see the rest.
  const lines =
    error instanceof ProblemsError && (configCheck || error.problems.length === 1)
      ? error.problems
      : error instanceof ProblemsError
        ? [`${error.shortMessage}; \`tokenquery config check\` lists them all`]
        : [message.split('\n')[0] ?? message];
  for (const line of lines) process.stderr.write(`tokenquery: ${redactUrls(line)}\n`);
  if (process.env.TOKENQUERY_DEBUG && error instanceof Error) process.stderr.write(`${error.stack}\n`);
  process.exit(error instanceof UserError ? 2 : 1);
}
