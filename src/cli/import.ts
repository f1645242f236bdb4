/**
 * `tokenquery import`: the CLI glue around `importer/` (options → store, node, summary).
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createEvmSource } from '../chains/evm/source.js';
import { createRpcClient } from '../chains/jsonrpc/rpc-client.js';
import { DEFAULTS } from '../config/load.js';
import { type ImportSummary, importTransfers } from '../importer/importer.js';
import type { InputFormat } from '../importer/input.js';
import { createImportNode } from '../importer/node-reader.js';
import { quote } from '../importer/text.js';
import { createExactnessCheck } from '../indexer/exactness-check.js';
import { checkNodes } from '../indexer/run.js';
import { isEvmChain } from '../internal/chains.js';
import { UserError } from '../internal/errors.js';
import { createLogger } from '../internal/logger.js';
import { openStore } from '../store/open.js';
import { loadOneChainConfig } from './one-chain.js';

/** Raw options as commander parses them. */
export interface ImportRawOptions {
  db?: string;
  rpc?: string[];
  chain: string;
  format?: string;
  sorted?: boolean;
  fromBlock?: string;
  toBlock?: string;
  tmpDir?: string;
  finality?: string;
  batchTransfers?: string;
  logLevel?: string;
  /** `--config`: db, rpc and log level may come from the config file too. */
  config?: string;
}

export const IMPORT_HELP = `
Input
  CSV (with a header line) or JSON lines, each optionally gzipped: gzip is recognised by its
  magic bytes, the format by the first character ({ = JSON lines) unless --format says.
  Several files may be given (a sharded BigQuery export); - reads standard input.
  A line may be at most 1 MiB (1,048,576 characters; a CSV record with quoted line breaks counts
  as one line): a longer one is refused, naming the file and line.

Columns (names as ethereum-etl and BigQuery's crypto_ethereum.token_transfers write them)
  required  token_address, from_address, to_address, value, transaction_hash, log_index,
            block_number
  optional  block_timestamp   Unix seconds (ethereum-etl) or "2023-05-01 12:34:56 UTC" (BigQuery)
            transaction_index
            block_hash        checked against the node when it is asked for the block anyway
  Other columns (and JSON items whose "type" is not token_transfer) are ignored. value must be
  exact decimal text: floats and exponents (1.5e+21) are refused, since they have lost digits.

What comes from the node (--rpc)
  Missing block_timestamp and transaction_index (one eth_getBlockByNumber per block, batched),
  and for every token the store does not know yet: name, symbol, decimals, total supply, and
  whether it is an ERC-20 at all. ethereum-etl and BigQuery list ERC-721 transfers as token
  transfers too; their rows are skipped (and counted) because the API serves fungible
  transfers only. Without --rpc every optional column and every token must already be known.

Order
  Rows may come in any order. They are sorted through a temporary SQLite file in --tmp-dir
  (about 150 bytes per row; default: the directory of the --db file), which also drops rows
  given twice and refuses two different rows for one log. With --sorted that step is skipped
  for input already in chain order (block, then log index), and the order is checked instead.
  SQLite's own temporary files (the first import's sorts, up to the size of the largest table)
  go to --tmp-dir too, unless SQLITE_TMPDIR is set.

Resuming, and indexing afterwards
  Batches of whole blocks commit with the checkpoint, like the indexer's. Rows at or below the
  store's checkpoint are skipped, so an interrupted import (Ctrl-C stops after the current
  batch) resumes by running the same command again, and \`tokenquery index\` continues from
  the last imported block. An export that starts after the checkpoint + 1 is refused: it
  would leave a hole.

Examples
  tokenquery import token_transfers.csv.gz --rpc eth=http://127.0.0.1:8545
  tokenquery import bq-export-*.json.gz --rpc eth=http://127.0.0.1:8545 --db ./data/eth.sqlite
  zcat part-*.csv.gz | tokenquery import - --sorted --rpc eth=http://127.0.0.1:8545
  tokenquery index --rpc eth=http://127.0.0.1:8545      # goes on from the last imported block`;

const out = (line: string) => process.stdout.write(`${line}\n`);

function blockOption(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[0-9]+$/.test(text)) throw new UserError(`${name} must be a whole number, got ${quote(text)}`);
  return Number(text);
}

/** Runs the import and prints a summary on stdout (logs and progress go to stderr). */
export async function importCommand(files: string[], raw: ImportRawOptions): Promise<void> {
  const chain = raw.chain.trim().toLowerCase();
  if (!isEvmChain(chain))
    throw new UserError(`--chain: ${quote(chain)} is not an EVM chain (eth, bsc, kcs, movr)`);
  let format: InputFormat | undefined;
  if (raw.format !== undefined) {
    if (raw.format !== 'csv' && raw.format !== 'jsonl') {
      throw new UserError(`--format must be csv or jsonl, got ${quote(raw.format)}`);
    }
    format = raw.format;
  }
  if (files.length === 0) throw new UserError('give at least one export file (or - for standard input)');
  if (files.filter((f) => f === '-').length > 1)
    throw new UserError('standard input (-) can be read only once');
  const finality =
    raw.finality === undefined ? DEFAULTS.finalityDepth : blockOption('--finality', raw.finality)!;
  const fromBlock = blockOption('--from-block', raw.fromBlock);
  const toBlock = blockOption('--to-block', raw.toBlock);
  const batchTransfers = blockOption('--batch-transfers', raw.batchTransfers);
  if (batchTransfers !== undefined && (batchTransfers < 1 || batchTransfers > 1_000_000)) {
    throw new UserError('--batch-transfers must be between 1 and 1000000');
  }
  const { config, chainConfig } = loadOneChainConfig(raw, chain);
  const logger = createLogger({ level: config.logLevel });
  const postgres = /^postgres(ql)?:\/\//i.test(config.db);
  const tmpDir = resolve(raw.tmpDir ?? (postgres ? '.' : dirname(config.db)));
  if (!postgres) mkdirSync(dirname(config.db), { recursive: true });
  mkdirSync(tmpDir, { recursive: true });
  // SQLite's own temporary files (the bulk load's sorts, as large as the largest table built) go
  // there too, unless the environment says where.
  if (!postgres && (process.env.SQLITE_TMPDIR ?? '') === '') process.env.SQLITE_TMPDIR = tmpDir;

  if (chainConfig) await checkNodes([chainConfig], logger);
  const controller = new AbortController();
  const node = chainConfig
    ? (() => {
        // No abort signal here: on Ctrl-C the batches already being prepared finish and commit.
        const rpc = createRpcClient({ url: chainConfig.rpcUrl, logger });
        return createImportNode({ rpc, source: createEvmSource({ rpc, logger }) });
      })()
    : null;

  // The store's own info lines (migrations) would come before a one-line input error; keep them out.
  const storeLogger = logger.isLevelEnabled('info') ? logger.child({}, { level: 'warn' }) : logger;
  const store = await openStore({ location: config.db, logger: storeLogger, writerThread: true });
  // Opened: what the store logs now (a bulk load's progress) is the import's own.
  storeLogger.level = logger.level;
  // First Ctrl-C: stop after the batch being committed (the next run resumes); second: now.
  const stop = () => {
    if (controller.signal.aborted) process.exit(130);
    logger.warn('stopping after the batch being committed; run the same command again to resume');
    controller.abort();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  // The indexer's check, on the tokens whose supplies the import reads at its end: one for the
  // whole import, like the indexer's for its run.
  const exactness =
    node === null
      ? null
      : createExactnessCheck({
          chain,
          store: store.writer,
          readSupplies: async (addresses, block) =>
            (await node.supplies(addresses, block)).map((s) => ({ ...s, atBlock: block })),
          readBalances: (token, holders, block) => node.balances(token, holders, block),
        });
  let summary: ImportSummary;
  try {
    summary = await importTransfers({
      store,
      chain,
      inputs: files,
      node,
      logger,
      signal: controller.signal,
      tmpDir,
      finalityDepth: finality,
      sorted: raw.sorted === true,
      ...(format === undefined ? {} : { format }),
      ...(fromBlock === undefined ? {} : { fromBlock }),
      ...(toBlock === undefined ? {} : { toBlock }),
      ...(batchTransfers === undefined ? {} : { batchTransfers }),
      ...(exactness === null ? {} : { checkExactness: exactness.check }),
    });
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await store.close();
  }
  printSummary(summary, chainConfig === undefined);
  if (summary.interrupted) process.exitCode = 130;
}

function printSummary(s: ImportSummary, noNode: boolean): void {
  const n = (x: number) => x.toLocaleString('en-US');
  const seconds = s.readSeconds + s.writeSeconds;
  const range = s.fromBlock === null ? 'no new blocks' : `blocks ${s.fromBlock}-${s.toBlock}`;
  out(
    `${s.interrupted ? 'interrupted: ' : ''}imported ${n(s.imported)} transfers into ${s.chain} (${range}, ${n(s.newTokens)} new tokens) ` +
      `from ${n(s.rowsRead)} rows in ${seconds.toFixed(1)} s (${n(Math.round(s.rowsRead / Math.max(seconds, 1e-3)))} rows/s)`,
  );
  const skipped = [
    s.skippedCommitted > 0 ? `${n(s.skippedCommitted)} rows already in the store` : '',
    s.duplicates > 0 ? `${n(s.duplicates)} duplicate rows` : '',
    s.nonFungibleRows > 0
      ? `${n(s.nonFungibleRows)} rows of ${n(s.nonFungibleTokens)} non-ERC-20 tokens`
      : '',
    s.otherItems > 0 ? `${n(s.otherItems)} JSON items that are not token transfers` : '',
  ].filter(Boolean);
  if (skipped.length > 0) out(`skipped: ${skipped.join(', ')}`);
  if (s.checkpoint !== null) {
    out(
      `checkpoint: block ${s.checkpoint}; \`tokenquery index --rpc ${s.chain}=<url>\` continues from block ${s.checkpoint + 1}` +
        (s.interrupted ? ', and running this import again resumes it' : ''),
    );
  }
  if (noNode && s.imported > 0)
    out(
      'token supplies were not read (no --rpc): the indexer reads them, and checks exact balances, when it starts',
    );
  if (s.markedNotExact > 0)
    out(
      `${n(s.markedNotExact)} tokens marked not exact: balanceOf differs from their imported Transfer rows (see docs/reliability.md, "Exact balances")`,
    );
}
