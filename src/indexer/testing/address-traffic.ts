/**
 * Traffic for the address and holder tests on a real anvil chain: thousands of real ERC-20 calls
 * among a few dozen addresses, the kinds that make address views hard: mints, burns,
 * self-transfers, zero values, and ordinary transfers of random shares of a balance, so holder
 * ranks keep moving. Many transactions share a block (automine off, one `anvil_mine` per block).
 *
 * Every call is one that cannot revert whatever order the node puts a block's transactions in:
 * a sender only spends what it held at the start of the block. The test's expectations never
 * come from here: they come from the node (logs and `balanceOf`).
 */
import { encodeCall } from '../../devchain/abi.js';
import { getAccounts, getBlockNumber, mine, setAutomine } from '../../devchain/chain.js';
import { type DeployedToken, selector } from '../../devchain/deploy.js';
import { rpc, rpcBatch, toQuantity } from '../../devchain/rpc.js';
import { seededRandom } from '../../internal/random.js';

export interface AddressTrafficOptions {
  /** Calls to make in total (one Transfer log each). */
  calls: number;
  /** Calls per mined block. Default 150. */
  perBlock?: number;
  /** Addresses that only receive (besides the node's unlocked accounts, which send). Default 8. */
  receivers?: number;
  seed: number;
}

export interface AddressTrafficResult {
  /** Calls made, one Transfer log each. */
  calls: number;
  /** Every address that sent or received, the receive-only ones included. */
  addresses: string[];
  fromBlock: number;
  toBlock: number;
}

/**
 * Makes `calls` calls on `tokens` (each minted by its deployer) from the node's unlocked accounts.
 * Leaves automine on when done.
 */
export async function addressTraffic(
  url: string,
  tokens: readonly DeployedToken[],
  options: AddressTrafficOptions,
): Promise<AddressTrafficResult> {
  const random = seededRandom(options.seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const accounts = (await getAccounts(url)).map((a) => a.toLowerCase());
  const receivers = Array.from(
    { length: options.receivers ?? 8 },
    (_, i) =>
      `0x${(options.seed * 1000 + i + 1).toString(16).padStart(8, '0')}${'c0ffee'.repeat(6).slice(0, 32)}`,
  );
  const everyone = [...accounts, ...receivers];
  // Balances at the start of the current block, and what each sender spent of them in it.
  const settled = new Map<string, bigint>();
  const key = (token: string, address: string) => `${token}|${address}`;
  for (const token of tokens)
    settled.set(key(token.address, token.deployer.toLowerCase()), token.initialSupply);
  const held = (token: string, address: string) => settled.get(key(token, address)) ?? 0n;
  const nonces = new Map<string, number>();
  for (const account of accounts) {
    nonces.set(
      account,
      Number.parseInt(await rpc<string>(url, 'eth_getTransactionCount', [account, 'pending']), 16),
    );
  }

  const perBlock = options.perBlock ?? 150;
  const fromBlock = (await getBlockNumber(url)) + 1;
  await setAutomine(url, false);
  try {
    for (let done = 0; done < options.calls; ) {
      const spent = new Map<string, bigint>();
      const received = new Map<string, bigint>();
      const txs: { from: string; to: string; data: string }[] = [];
      const move = (token: string, from: string | null, to: string | null, amount: bigint) => {
        if (from !== null) spent.set(key(token, from), (spent.get(key(token, from)) ?? 0n) + amount);
        if (to !== null) received.set(key(token, to), (received.get(key(token, to)) ?? 0n) + amount);
      };
      const available = (token: string, address: string) =>
        held(token, address) - (spent.get(key(token, address)) ?? 0n);
      for (let i = 0; i < perBlock && done < options.calls; i++, done++) {
        const token = pick(tokens);
        const from = pick(accounts);
        const free = available(token.address, from);
        const share = (max: bigint) =>
          max <= 0n ? 0n : (max * BigInt(Math.floor(random() * 1000) + 1)) / 1000n;
        const roll = random();
        const transfer = (to: string, amount: bigint) => {
          txs.push({
            from,
            to: token.address,
            data: encodeCall(selector('transfer(address,uint256)'), [
              { type: 'address', value: to },
              { type: 'uint256', value: amount },
            ]),
          });
          move(token.address, from, to, amount);
        };
        if (roll < 0.06) {
          // A mint by the deployer to anyone, up to a tenth of the initial supply.
          const to = pick(everyone);
          const amount = share(token.initialSupply / 10n);
          txs.push({
            from: token.deployer.toLowerCase(),
            to: token.address,
            data: encodeCall(selector('mint(address,uint256)'), [
              { type: 'address', value: to },
              { type: 'uint256', value: amount },
            ]),
          });
          move(token.address, null, to, amount);
        } else if (roll < 0.12) {
          // A burn of part of what the sender holds (zero when it holds nothing: still a Transfer).
          const amount = share(free);
          txs.push({
            from,
            to: token.address,
            data: encodeCall(selector('burn(uint256)'), [{ type: 'uint256', value: amount }]),
          });
          move(token.address, from, null, amount);
        } else if (roll < 0.18) {
          transfer(from, share(free)); // to itself
        } else if (roll < 0.24) {
          transfer(pick(everyone), 0n);
        } else {
          let to = pick(everyone);
          if (to === from) to = pick(receivers);
          // Mostly small shares, now and then most of it, so ranks move.
          transfer(to, random() < 0.2 ? share(free) : share(free / 50n));
        }
      }
      await rpcBatch(
        url,
        txs.map((tx) => {
          const nonce = nonces.get(tx.from)!;
          nonces.set(tx.from, nonce + 1);
          return {
            method: 'eth_sendTransaction',
            params: [{ ...tx, gas: toQuantity(120_000), nonce: toQuantity(nonce) }],
          };
        }),
      );
      await mine(url, 1);
      for (const [k, amount] of spent) settled.set(k, (settled.get(k) ?? 0n) - amount);
      for (const [k, amount] of received) settled.set(k, (settled.get(k) ?? 0n) + amount);
    }
  } finally {
    await setAutomine(url, true);
  }
  return { calls: options.calls, addresses: everyone, fromBlock, toBlock: await getBlockNumber(url) };
}
