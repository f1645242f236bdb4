/**
 * Live traffic on an anvil chain for the reliability scenarios: transactions sent without pause
 * (transfers, mints, burns), blocks mined on a timer, and the head once both have stopped.
 */
import { encodeCall } from '../../devchain/abi.js';
import { type AnvilInstance, startAnvil } from '../../devchain/anvil.js';
import { getAccounts, getBlockNumber, sendTransaction, waitForReceipt } from '../../devchain/chain.js';
import { addressOf, type DeployedToken, deployDemoTokens, selector } from '../../devchain/deploy.js';
import { rpc } from '../../devchain/rpc.js';
import { SPRAY_GAS_LIMIT, spray } from '../../devchain/traffic.js';
import { DEAD_ADDRESS } from '../../internal/chains.js';
import { seededRandom } from '../../internal/random.js';

/** Options of {@link startTraffic}. */
export interface TrafficOptions {
  seed: number;
  /** Pause between two transactions. Default 20 ms. */
  intervalMs?: number;
  /** Every n-th transaction is a mint (capped token excluded) or a burn. Default 15. */
  mintBurnEvery?: number;
}

/** Live traffic on an anvil chain; see {@link startTraffic}. */
export interface Traffic {
  /** Transactions sent (transfers, mints, burns). */
  readonly sent: number;
  /** Sends that failed (logged nowhere: a chain mid-reorg may refuse some). */
  readonly failed: number;
  /** Stops sending and waits for the send in progress. */
  pause(): Promise<void>;
  resume(): void;
  stop(): Promise<void>;
}

/**
 * Funds the dev accounts with every token, then keeps sending transactions without waiting for
 * them: transfers between the dev accounts and a few fresh addresses (some to 0x…dead), and now
 * and then a mint or a burn, so supplies move too. Senders hold far more than they send, so no
 * transaction reverts for lack of balance.
 */
export async function startTraffic(
  url: string,
  tokens: readonly DeployedToken[],
  options: TrafficOptions,
): Promise<Traffic> {
  const accounts = await getAccounts(url);
  const deployer = accounts[0]!;
  const random = seededRandom(options.seed);
  const intervalMs = options.intervalMs ?? 20;
  const every = options.mintBurnEvery ?? 15;
  const recipients = [...accounts, DEAD_ADDRESS];
  for (let i = 0; i < 12; i++)
    recipients.push(
      `0x${Math.floor(random() * 2 ** 32)
        .toString(16)
        .padStart(8, '0')}${'ab'.repeat(16)}`,
    );
  const transferData = (to: string, amount: bigint) =>
    encodeCall(selector('transfer(address,uint256)'), [
      { type: 'address', value: to },
      { type: 'uint256', value: amount },
    ]);
  // Funding, mined before the traffic starts.
  const funding: string[] = [];
  for (const token of tokens) {
    for (const account of accounts.slice(1)) {
      funding.push(
        await sendTransaction(url, {
          from: deployer,
          to: token.address,
          data: transferData(account, 10n ** 6n * 10n ** BigInt(token.decimals)),
          gas: 100_000,
        }),
      );
    }
  }
  for (const hash of funding) await waitForReceipt(url, hash);

  let sent = 0;
  let failed = 0;
  let running = true;
  let stopped = false;
  let current: Promise<void> = Promise.resolve();
  const loop = async () => {
    while (!stopped) {
      if (!running) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        continue;
      }
      const step = (async () => {
        const token = tokens[Math.floor(random() * tokens.length)]!;
        const unit = 10n ** BigInt(token.decimals);
        const n = sent + failed + 1;
        try {
          if (n % every === 0 && token.kind !== 'capped' && random() < 0.5) {
            const data = encodeCall(selector('mint(address,uint256)'), [
              { type: 'address', value: recipients[Math.floor(random() * recipients.length)]! },
              { type: 'uint256', value: BigInt(1 + Math.floor(random() * 1000)) * unit },
            ]);
            await sendTransaction(url, { from: deployer, to: token.address, data, gas: 150_000 });
          } else if (n % every === 0) {
            const data = encodeCall(selector('burn(uint256)'), [
              { type: 'uint256', value: BigInt(1 + Math.floor(random() * 100)) * unit },
            ]);
            await sendTransaction(url, { from: deployer, to: token.address, data, gas: 150_000 });
          } else {
            const from = accounts[1 + Math.floor(random() * (accounts.length - 1))]!;
            let to = recipients[Math.floor(random() * recipients.length)]!;
            if (to === from) to = deployer;
            const amount = (unit * BigInt(1 + Math.floor(random() * 10_000))) / 100n;
            await sendTransaction(url, {
              from,
              to: token.address,
              data: transferData(to, amount),
              gas: 100_000,
            });
          }
          sent++;
        } catch {
          failed++;
        }
      })();
      current = step;
      await step;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  };
  const done = loop();
  return {
    get sent() {
      return sent;
    },
    get failed() {
      return failed;
    },
    async pause() {
      running = false;
      await current;
    },
    resume() {
      running = true;
    },
    async stop() {
      stopped = true;
      await done;
    },
  };
}

/** Drops every pending transaction (`anvil_dropAllTransactions`): after a reorg, senders' nonces start again from the chain. */
export async function dropPendingTransactions(url: string): Promise<void> {
  await rpc(url, 'anvil_dropAllTransactions');
}

/** Lower-case addresses of the given tokens. */
export const addressesOf = (tokens: readonly DeployedToken[]) => tokens.map((t) => addressOf(t));

/** Mines an (empty unless transactions wait) block every `everyMs` until `stop()`, which waits for the one in flight. */
export function startMiner(url: string, everyMs: number): { stop(): Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await new Promise((resolve) => setTimeout(resolve, everyMs));
      if (stopped) break;
      await rpc(url, 'anvil_mine', ['0x1']).catch(() => {});
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** Once traffic and mining have stopped: the head, after it has stayed put for `quietMs` (a last transaction may still be mined). */
export async function settledHead(url: string, quietMs = 500): Promise<number> {
  let head = await getBlockNumber(url);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, quietMs));
    const now = await getBlockNumber(url);
    if (now === head) return head;
    head = now;
  }
}

/**
 * A real anvil with the demo tokens deployed and two of them sprayed in dense blocks: `transfers`
 * of the first among 2,000 holders, a quarter as many of `second` among 500, `perTx` a transaction.
 * The chain of the scenarios that need a backfill's worth of history.
 */
export async function startSprayedChain(options: {
  transfers: number;
  perTx: number;
  /** Which demo token is sprayed second. */
  second: number;
  /** The two sprays' seeds. */
  seeds: readonly [number, number];
}): Promise<{ anvil: AnvilInstance; tokens: DeployedToken[] }> {
  const anvil = await startAnvil({ gasLimit: SPRAY_GAS_LIMIT });
  const tokens = await deployDemoTokens(anvil.url);
  const { transfers, perTx, seeds } = options;
  await spray(anvil.url, tokens[0]!, { transfers, holders: 2_000, seed: seeds[0], perTx });
  await spray(anvil.url, tokens[options.second]!, {
    transfers: transfers / 4,
    holders: 500,
    seed: seeds[1],
    perTx,
  });
  return { anvil, tokens };
}
