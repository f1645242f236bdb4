import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type AnvilInstance, startAnvil } from './anvil.js';
import { getBlockNumber } from './chain.js';
import {
  balanceOf,
  balancesOf,
  type DeployedToken,
  deployDemoTokens,
  readNameSymbol,
  TRANSFER_TOPIC,
  totalSupply,
} from './deploy.js';
import { DevchainError, rpc, toQuantity } from './rpc.js';
import { sendTransfers, spray, sprayHolders } from './traffic.js';

interface Log {
  topics: string[];
  data: string;
  blockNumber: string;
}

async function logsOf(url: string, token: string, fromBlock: number, toBlock: number): Promise<Log[]> {
  const out: Log[] = [];
  // Chunks of 50 blocks keep each answer moderate.
  for (let b = fromBlock; b <= toBlock; b += 50) {
    const part = await rpc<Log[]>(url, 'eth_getLogs', [
      {
        address: token,
        topics: [TRANSFER_TOPIC],
        fromBlock: toQuantity(b),
        toBlock: toQuantity(Math.min(toBlock, b + 49)),
      },
    ]);
    out.push(...part);
  }
  return out;
}

/** Balances the way an indexer computes them: the sum of incoming minus outgoing Transfer values. */
function balancesFromLogs(logs: readonly Log[]): Map<string, bigint> {
  const balances = new Map<string, bigint>();
  for (const log of logs) {
    const from = `0x${log.topics[1]!.slice(26)}`;
    const to = `0x${log.topics[2]!.slice(26)}`;
    const value = BigInt(log.data);
    balances.set(from, (balances.get(from) ?? 0n) - value);
    balances.set(to, (balances.get(to) ?? 0n) + value);
  }
  return balances;
}

describe('spray', () => {
  let anvil: AnvilInstance;
  let tokens: DeployedToken[];
  before(async () => {
    anvil = await startAnvil({ gasLimit: 1_000_000_000n });
    tokens = await deployDemoTokens(anvil.url);
  });
  after(() => anvil.stop());

  test('generates exactly the requested number of well-formed Transfer logs', async () => {
    const token = tokens[0]!;
    const result = await spray(anvil.url, token, { transfers: 25_000, holders: 300, seed: 11, perTx: 4000 });
    assert.equal(result.transfers, 25_000);
    assert.equal(result.transactions, 7);
    assert.ok(result.toBlock >= result.fromBlock && result.toBlock <= (await getBlockNumber(anvil.url)));
    const logs = await logsOf(anvil.url, token.address, result.fromBlock, result.toBlock);
    assert.equal(logs.length, 25_000);
    for (const log of logs) {
      assert.equal(log.topics.length, 3);
      assert.equal(log.data.length, 2 + 64);
      assert.notEqual(log.topics[1], log.topics[2], 'a spray transfer never goes to its sender');
    }
  });

  test('balanceOf equals what the events imply, and the holders plus the sender hold the whole supply', async () => {
    const token = tokens[1]!; // 6 decimals
    const holders = 500;
    const result = await spray(anvil.url, token, { transfers: 6000, holders, seed: 5, perTx: 1500 });
    // The whole history of the token: its mint at deployment, then the spray.
    const logs = await logsOf(anvil.url, token.address, token.blockNumber, result.toBlock);
    assert.equal(logs.length, 1 + 6000);
    const fromEvents = balancesFromLogs(logs);
    fromEvents.delete('0x0000000000000000000000000000000000000000');

    const derived = await sprayHolders(anvil.url, token, 5, holders);
    assert.equal(new Set(derived).size, holders);
    const seen = [...fromEvents.keys()];
    // Every address in the events is the sender or one of the derived holders, and with 6000 transfers
    // over windows that cover all 500 holders, every holder took part.
    assert.deepEqual(new Set(seen), new Set([token.deployer, ...derived]));

    const onChain = await balancesOf(anvil.url, token, seen);
    for (const [i, address] of seen.entries()) assert.equal(onChain[i], fromEvents.get(address), address);
    const sum = onChain.reduce((a, b) => a + b, 0n);
    assert.equal(sum, token.initialSupply);
    assert.equal(await totalSupply(anvil.url, token), token.initialSupply);
  });

  test('the same seed sprays among the same holders across calls', async () => {
    const token = tokens[3]!; // bytes32 name/symbol
    const first = await spray(anvil.url, token, { transfers: 300, holders: 40, seed: 99 });
    const second = await spray(anvil.url, token, { transfers: 300, holders: 40, seed: 99 });
    const a = balancesFromLogs(await logsOf(anvil.url, token.address, first.fromBlock, first.toBlock));
    const b = balancesFromLogs(await logsOf(anvil.url, token.address, second.fromBlock, second.toBlock));
    const holders = new Set(await sprayHolders(anvil.url, token, 99, 40));
    for (const address of [...a.keys(), ...b.keys()]) {
      assert.ok(holders.has(address) || address === token.deployer, address);
    }
    assert.deepEqual(await readNameSymbol(anvil.url, token, 'bytes32'), {
      name: 'Bytes32 Demo',
      symbol: 'B32D',
    });
  });

  test('a perTx that cannot fit in a block is refused before anything is sent', async () => {
    const head = await getBlockNumber(anvil.url);
    await assert.rejects(
      spray(anvil.url, tokens[0]!, { transfers: 100_000, holders: 10, perTx: 100_000 }),
      (error: unknown) => error instanceof DevchainError && /does not fit/.test(error.shortMessage),
    );
    assert.equal(await getBlockNumber(anvil.url), head);
  });

  test('a sender without tokens makes spray fail loudly', async () => {
    const [, , , , poor] = await rpc<string[]>(anvil.url, 'eth_accounts');
    await assert.rejects(
      spray(anvil.url, tokens[0]!, { transfers: 10, holders: 5, from: poor! }),
      (error: unknown) => error instanceof DevchainError && /reverted/.test(error.shortMessage),
    );
  });
});

describe('demo traffic', () => {
  test('sendTransfers sends count transfers whose logs match and whose balances add up', async () => {
    const anvil = await startAnvil();
    try {
      const tokens = await deployDemoTokens(anvil.url);
      const startBlock = Math.max(...tokens.map((t) => t.blockNumber)) + 1;
      const sent = await sendTransfers(anvil.url, tokens.slice(0, 2), { count: 40, seed: 9 });
      assert.equal(sent.length, 40);
      for (const t of tokens.slice(0, 2)) {
        const logs = await logsOf(anvil.url, t.address, startBlock, await getBlockNumber(anvil.url));
        const mine = sent.filter((s) => s.token === t.address);
        assert.equal(logs.length, mine.length);
        const holders = new Set([t.deployer, ...mine.map((s) => s.to)]);
        const balances = await Promise.all([...holders].map((h) => balanceOf(anvil.url, t, h)));
        assert.equal(
          balances.reduce((a, b) => a + b, 0n),
          t.initialSupply,
        );
      }
      // The same seed gives the same traffic.
      const again = await startAnvil();
      try {
        const tokens2 = await deployDemoTokens(again.url);
        const sent2 = await sendTransfers(again.url, tokens2.slice(0, 2), { count: 40, seed: 9 });
        assert.deepEqual(
          sent2.map((s) => [s.token, s.from, s.to, s.amount]),
          sent.map((s) => [s.token, s.from, s.to, s.amount]),
        );
      } finally {
        await again.stop();
      }
    } finally {
      await anvil.stop();
    }
  });

  test('with interval mining no demo transfer reverts on account of ordering within a block', async () => {
    const anvil = await startAnvil({ blockTime: 1 });
    try {
      const tokens = await deployDemoTokens(anvil.url);
      // waitForReceipt throws on a reverted transfer.
      const sent = await sendTransfers(anvil.url, [tokens[0]!], { count: 15, seed: 4 });
      const logs = await logsOf(
        anvil.url,
        tokens[0]!.address,
        tokens[0]!.blockNumber + 1,
        await getBlockNumber(anvil.url),
      );
      assert.equal(logs.length, sent.length);
    } finally {
      await anvil.stop();
    }
  });
});
