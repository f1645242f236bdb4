/**
 * `tokenquery verify`: the CLI glue around `indexer/verify.ts` (options → store, node, report).
 */

import { createEvmSource } from '../chains/evm/source.js';
import { createRpcClient } from '../chains/jsonrpc/rpc-client.js';
import { checkNodes } from '../indexer/run.js';
import { type VerifyDifference, verifyChain } from '../indexer/verify.js';
import { isEvmChain } from '../internal/chains.js';
import { UserError } from '../internal/errors.js';
import { createLogger } from '../internal/logger.js';
import { openStore } from '../store/open.js';
import { loadOneChainConfig } from './one-chain.js';

/** Raw options as commander parses them. */
export interface VerifyRawOptions {
  db?: string;
  rpc?: string[];
  chain: string;
  sample: string;
  addressSample: string;
  token?: string[];
  json?: boolean;
  logLevel?: string;
  config?: string;
}

export const VERIFY_HELP = `
What it checks (EVM chains)
  For every token (or each --token): the transfers stored are read back oldest first and summed
  into balances, independently of the indexer's own bookkeeping, starting from the balances
  seeded at the block before --from-block when the index starts late, with the balance changes
  no Transfer log records (wrapped-native deposits and withdrawals, Tether's issue, redeem and
  destroyed black funds). The store's transfer
  count, holder count and every stored balance must equal those sums, and the token's running
  sum of its stored balances (the zero address's left out; what the indexer's exactness check
  compares with totalSupply()) must equal what those balances add up to. With --rpc, the --sample
  largest holders of each token are also compared with balanceOf on the node at the indexed block,
  and a token whose summed balances differ from its totalSupply() there is named with how far off
  it is (not a difference by itself: ether forced into WETH9 raises its totalSupply(); the token
  is off where the sampled balances differ too).

  The address and holder views are checked against the same sums: every holding row (an
  address's balance and its count of the token's transfers, a self-transfer once, zero values
  too), and the holder order walked from first to last (exactly the positive balances other than
  the zero address's, by balance descending, then address ascending). The transfer lists of at
  most 2 x --address-sample + 1 addresses per token (the largest holders, the zero address, and
  others from the store's rows) are read page by page, as the API pages them (its deepest page,
  2,500 transfers), and compared with the newest-first lists the transfers give.

Exit status
  0  no difference        1  differences (listed)        2  a usage error

Notes
  Run it while the indexer of that chain is stopped: a batch committed during the scan makes
  counts move under it. After a crash mid-backfill the stored balances may lag the checkpoint
  (a backfill writes them behind it, and the indexer's next start replays the rest): verify
  says so and compares them as of the block they hold. Tokens the indexer has marked not exact
  (its exactness check, as the head moves; /status counts them) are named with how far off they
  are. balanceOf differs legitimately for tokens that change balances without
  Transfer events (rebasing, fee-on-transfer, some proxies), and when --from-block started after
  a token's first transfer on a node that could not answer the state before it (/status then
  shows "holdersPartial": true).

Examples
  tokenquery verify --db ./data/tokenquery.sqlite
  tokenquery verify --rpc eth=http://127.0.0.1:8545 --sample 50
  tokenquery verify --token 0xdac17f958d2ee523a2206206994597c13d831ec7 --json`;

const out = (line: string) => process.stdout.write(`${line}\n`);

export async function verifyCommand(raw: VerifyRawOptions): Promise<void> {
  const chain = raw.chain.trim().toLowerCase();
  if (!isEvmChain(chain))
    throw new UserError(`--chain: "${chain}" is not an EVM chain (eth, bsc, kcs, movr)`);
  if (!/^[0-9]{1,6}$/.test(raw.sample))
    throw new UserError(`--sample must be a whole number, got "${raw.sample}"`);
  if (!/^[0-9]{1,4}$/.test(raw.addressSample))
    throw new UserError(`--address-sample must be a whole number below 10000, got "${raw.addressSample}"`);
  const tokens = (raw.token ?? []).map((token) => {
    if (!/^0x[0-9a-fA-F]{40}$/.test(token)) throw new UserError(`--token: not a token address: ${token}`);
    return token.toLowerCase();
  });
  const { config, chainConfig } = loadOneChainConfig(raw, chain);
  const logger = createLogger({ level: config.logLevel });
  if (chainConfig) await checkNodes([chainConfig], logger);
  const source = chainConfig
    ? createEvmSource({ rpc: createRpcClient({ url: chainConfig.rpcUrl, logger }), logger })
    : null;
  const store = await openStore({ location: config.db, logger });
  try {
    const report = await verifyChain({
      store,
      chain,
      source,
      sample: Number(raw.sample),
      addressSample: Number(raw.addressSample),
      ...(tokens.length > 0 ? { tokens } : {}),
      logger,
    });
    if (raw.json) {
      out(JSON.stringify(report, (_key, value) => (typeof value === 'bigint' ? value.toString() : value)));
    } else {
      if (report.block === null) out(`${chain}: nothing indexed yet`);
      else {
        out(
          `${chain} at block ${report.block}: ${report.tokens} tokens, ${report.transfers} transfers, ` +
            `${report.balances} balances, ${report.holdings} holdings, ${report.holders} holders in order, ` +
            `${report.addressLists} address transfer lists, ${report.nodeChecks} balances compared with the node`,
        );
        if (report.balanceChanges > 0) {
          out(
            `${report.balanceChanges} balance changes without a transfer (deposits, withdrawals, issues, redeems, destroyed black funds) added to the sums`,
          );
        }
        if (report.seedBlock !== null) {
          out(
            `${report.seeds} starting balances read at block ${report.seedBlock}` +
              (report.holdersPartial
                ? '; partial: the node had no state there, so later holders started at 0'
                : ''),
          );
        }
        if (report.balancesBlock !== null) {
          out(
            `stored balances are those at block ${report.balancesBlock}: the indexer writes the rest ` +
              'with a later batch, or replays them at its next start; compared as such',
          );
        }
      }
      for (const drift of report.supplyDrift) {
        const off = drift.totalSupply - drift.summed;
        out(
          `${drift.token} summed balances ${drift.summed}, totalSupply() ${drift.totalSupply} at block ${drift.block} ` +
            `(off by ${off > 0n ? '+' : ''}${off}): not exact where the sampled balances differ too`,
        );
      }
      for (const { token, mark } of report.notExact) {
        out(
          `${token} marked not exact at block ${mark.atBlock}: summed balances minus totalSupply() ` +
            `${mark.supplyDrift}, ${mark.differing} of ${mark.sampled} sampled balances differ from balanceOf`,
        );
      }
      for (const difference of report.differences) out(describe(difference));
      out(report.differences.length === 0 ? 'no differences' : `${report.differences.length} differences`);
    }
    if (report.differences.length > 0) process.exitCode = 1;
  } finally {
    await store.close();
  }
}

function describe(d: VerifyDifference): string {
  switch (d.kind) {
    case 'transferCount':
    case 'holderCount':
      return `${d.token} ${d.kind}: stored ${d.stored}, recomputed ${d.recomputed}`;
    case 'balance':
      return `${d.token} balance of ${d.holder}: stored ${d.stored}, recomputed ${d.recomputed}`;
    case 'balanceSum':
      return `${d.token} balanceSum: stored ${d.stored ?? 'none'}, summed balances ${d.summed}`;
    case 'node':
      return `${d.token} balance of ${d.holder}: stored ${d.stored}, node ${d.node ?? 'reverts'} at block ${d.block}`;
    case 'holding': {
      const show = (h: { balance: bigint; transferCount: number } | null) =>
        h === null ? 'no row' : `${h.balance} (${h.transferCount} transfers)`;
      return `${d.token} holding of ${d.holder}: stored ${show(d.stored)}, recomputed ${show(d.recomputed)}`;
    }
    case 'holders':
      return `${d.token} holders in order: stored ${d.stored}, recomputed ${d.recomputed}`;
    case 'holderOrder': {
      const show = (h: { address: string; balance: bigint } | null) =>
        h === null ? 'none' : `${h.address} ${h.balance}`;
      return `${d.token} holder #${d.rank}: stored ${show(d.stored)}, recomputed ${show(d.recomputed)}`;
    }
    case 'addressTransfers':
      return (
        `${d.token} transfers of ${d.holder}, #${d.index + 1} newest first: ` +
        `stored ${d.stored ?? 'none'}, recomputed ${d.recomputed ?? 'none'}`
      );
  }
}
