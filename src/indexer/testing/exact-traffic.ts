/**
 * The contracts that move balances without a `Transfer` log, deployed on anvil, and random
 * traffic through them for the exact-balance tests:
 * - WETH9, the canonical build's bytecode as the `canonical-weth` package ships it (read from
 *   node_modules at test time; not copied into the repository): `Deposit`/`Withdrawal`;
 * - `TetherStyleToken` (contracts/legacy, our model of TetherToken's behaviour, built with solc
 *   0.4.17): `Issue`/`Redeem` crediting and debiting whoever `owner()` is, ownership moved without
 *   a log, blacklisting and `DestroyedBlackFunds`;
 * - `DepositVault`: a `Deposit` and a `Transfer` mint for one change (must count once);
 * - `StakingPool`: WETH9's `Deposit` event on a contract that is not a token.
 * The traffic records which addresses each token's calls touched, and when, so that a late
 * start's truth can be limited to the holders an index starting at a block sees.
 */
import { createRequire } from 'node:module';
import { encodeArgs, encodeCall } from '../../devchain/abi.js';
import { call, getAccounts, sendTransaction, waitForReceipt } from '../../devchain/chain.js';
import { DepositVault, StakingPool, TetherStyleToken } from '../../devchain/contracts.generated.js';
import { selector } from '../../devchain/deploy.js';
import { seededRandom } from '../../internal/random.js';

/** WETH9's functions (standard selectors; the package ships the ABI, not the selectors). */
const WETH9 = { deposit: 'd0e30db0', withdraw: '2e1a7d4d', transfer: 'a9059cbb', balanceOf: '70a08231' };

export interface ExactContracts {
  weth: string;
  tether: string;
  vault: string;
  pool: string;
  /**
   * anvil's unlocked accounts; the first deployed everything and owns the Tether-style token
   * first; the last one takes no part in the random traffic.
   */
  accounts: string[];
}

/** One address a call changed the balance of (or could have), at a block. */
export interface Touch {
  token: string;
  address: string;
  block: number;
}

/** State the traffic keeps between rounds. */
export interface ExactTraffic {
  contracts: ExactContracts;
  /** The Tether-style token's owner now (ownership moves without a log). */
  owner: string;
  touched: Touch[];
  /**
   * Runs `steps` random calls (seeded), one block each; the first `firstDeposits` of them WETH9
   * deposits (a wrapped-native token's first events come before its first `Transfer`).
   */
  run(steps: number, seed: number, firstDeposits?: number): Promise<void>;
}

async function deploy(url: string, from: string, bytecode: string, args = ''): Promise<string> {
  const hash = await sendTransaction(url, { from, data: bytecode + args, gas: 3_000_000 });
  const receipt = await waitForReceipt(url, hash);
  return receipt.contractAddress!;
}

/** Deploys the four contracts from the first account. */
export async function deployExactContracts(url: string): Promise<ExactContracts> {
  const accounts = await getAccounts(url);
  const from = accounts[0]!;
  const require = createRequire(import.meta.url);
  const weth9 = require('canonical-weth/build/contracts/WETH9.json') as { bytecode: string };
  return {
    weth: await deploy(url, from, weth9.bytecode),
    tether: await deploy(
      url,
      from,
      TetherStyleToken.bytecode,
      encodeArgs([
        { type: 'string', value: 'Tether USD' },
        { type: 'string', value: 'USDT' },
        { type: 'uint256', value: 6 },
      ]),
    ),
    vault: await deploy(url, from, DepositVault.bytecode),
    pool: await deploy(url, from, StakingPool.bytecode),
    accounts,
  };
}

async function balance(url: string, token: string, holder: string): Promise<bigint> {
  return BigInt(await call(url, token, `0x${WETH9.balanceOf}${holder.slice(2).padStart(64, '0')}`));
}

/** Random traffic through `contracts` (see the module comment). */
export function exactTraffic(url: string, contracts: ExactContracts): ExactTraffic {
  const { weth, tether, vault, pool, accounts } = contracts;
  // The last account is kept out of the traffic (a newcomer for the reorg test).
  const users = accounts.slice(1, -1);
  const state: ExactTraffic = {
    contracts,
    owner: accounts[0]!,
    touched: [],
    async run(steps, seed, firstDeposits = 0) {
      const next = seededRandom(seed);
      const int = (n: number): number => Math.floor(next() * n);
      const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;
      const amount = (): bigint => BigInt(1 + int(1_000_000)) * 1_000_000n;
      const send = async (
        from: string,
        to: string,
        data: string,
        touched: [token: string, address: string][],
        value?: bigint,
      ): Promise<void> => {
        const hash = await sendTransaction(url, {
          from,
          to,
          data,
          gas: 300_000,
          ...(value === undefined ? {} : { value }),
        });
        const { blockNumber } = await waitForReceipt(url, hash);
        for (const [token, address] of touched) state.touched.push({ token, address, block: blockNumber });
      };
      const addressArg = (value: string) => ({ type: 'address' as const, value });
      const uintArg = (value: bigint) => ({ type: 'uint256' as const, value });
      for (let step = 0; step < steps; step++) {
        const user = pick(users);
        const other = pick(users);
        const kind = step < firstDeposits ? 0 : int(14);
        if (kind <= 2) {
          await send(user, weth, `0x${WETH9.deposit}`, [[weth, user]], amount());
        } else if (kind === 3) {
          const held = await balance(url, weth, user);
          if (held === 0n) continue;
          const wad = held / BigInt(1 + int(3));
          await send(user, weth, encodeCall(WETH9.withdraw, [uintArg(wad)]), [[weth, user]]);
        } else if (kind === 4) {
          const held = await balance(url, weth, user);
          const data = encodeCall(WETH9.transfer, [addressArg(other), uintArg(held / 2n)]);
          await send(user, weth, data, [
            [weth, user],
            [weth, other],
          ]);
        } else if (kind === 5) {
          await send(
            state.owner,
            tether,
            encodeCall(selector('issue(uint256)', TetherStyleToken), [uintArg(amount())]),
            [[tether, state.owner]],
          );
        } else if (kind === 6) {
          const held = await balance(url, tether, state.owner);
          const data = encodeCall(selector('redeem(uint256)', TetherStyleToken), [uintArg(held / 3n)]);
          await send(state.owner, tether, data, [[tether, state.owner]]);
        } else if (kind === 7) {
          // From the owner, or from a holder: the issued amounts spread.
          const from = next() < 0.6 ? state.owner : user;
          const held = await balance(url, tether, from);
          const data = encodeCall(selector('transfer(address,uint256)', TetherStyleToken), [
            addressArg(other),
            uintArg(held / 2n),
          ]);
          await send(from, tether, data, [
            [tether, from],
            [tether, other],
          ]);
        } else if (kind === 8) {
          // Ownership moves without a log: the next Issue credits the new owner.
          const data = encodeCall(selector('transferOwnership(address)', TetherStyleToken), [
            addressArg(user),
          ]);
          await send(state.owner, tether, data, []);
          state.owner = user;
        } else if (kind === 9) {
          if (user === state.owner) continue;
          const held = await balance(url, tether, user);
          if (held === 0n) continue;
          const list = encodeCall(selector('addBlackList(address)', TetherStyleToken), [addressArg(user)]);
          await send(state.owner, tether, list, []);
          const destroy = encodeCall(selector('destroyBlackFunds(address)', TetherStyleToken), [
            addressArg(user),
          ]);
          await send(state.owner, tether, destroy, [[tether, user]]);
          // Lifted again, so the address can hold and move the token later.
          const lift = encodeCall(selector('removeBlackList(address)', TetherStyleToken), [addressArg(user)]);
          await send(state.owner, tether, lift, []);
        } else if (kind === 10) {
          const fn = pick(['deposit()', 'depositTwice()']);
          await send(user, vault, encodeCall(selector(fn, DepositVault)), [[vault, user]], amount());
        } else if (kind === 11) {
          // The depositor's balance does not change: only the recipient's.
          const data = encodeCall(selector('depositFor(address)', DepositVault), [addressArg(other)]);
          await send(user, vault, data, [[vault, other]], amount());
        } else if (kind === 12) {
          const held = await balance(url, vault, user);
          const fn = next() < 0.5 ? 'withdraw(uint256)' : null;
          if (fn !== null) {
            await send(user, vault, encodeCall(selector(fn, DepositVault), [uintArg(held / 2n)]), [
              [vault, user],
            ]);
          } else {
            const data = encodeCall(selector('transfer(address,uint256)', DepositVault), [
              addressArg(other),
              uintArg(held / 2n),
            ]);
            await send(user, vault, data, [
              [vault, user],
              [vault, other],
            ]);
          }
        } else {
          await send(user, pool, encodeCall(selector('stake()', StakingPool)), [], amount());
        }
      }
    },
  };
  return state;
}
