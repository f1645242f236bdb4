import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bytes32ToText, decodeStringBytes, decodeUint, encodeCall } from './abi.js';
import { type AnvilInstance, startAnvil } from './anvil.js';
import { call, getAccounts, TransactionRevertedError } from './chain.js';
import { CappedDemoToken, DemoToken } from './contracts.generated.js';
import {
  balanceOf,
  burnToken,
  DEMO_TOKEN_SPECS,
  type DeployedToken,
  deployDemoNft,
  deployDemoTokens,
  deployToken,
  mintNft,
  mintToken,
  readNameSymbol,
  TRANSFER_TOPIC,
  totalSupply,
  transferToken,
} from './deploy.js';
import { RpcResponseError, rpc } from './rpc.js';

const sel = (signature: string): string => DemoToken.selectors[signature]!;
const ZERO = '0x0000000000000000000000000000000000000000';
const topicOf = (address: string): string => `0x${address.slice(2).padStart(64, '0')}`;

interface Log {
  address: string;
  topics: string[];
  data: string;
  transactionHash: string;
}

async function transferLogs(url: string, token: string, fromBlock = 0): Promise<Log[]> {
  return rpc<Log[]>(url, 'eth_getLogs', [
    { address: token, topics: [TRANSFER_TOPIC], fromBlock: `0x${fromBlock.toString(16)}`, toBlock: 'latest' },
  ]);
}

describe('demo token set', () => {
  let anvil: AnvilInstance;
  let tokens: DeployedToken[];
  before(async () => {
    anvil = await startAnvil();
    tokens = await deployDemoTokens(anvil.url);
  });
  after(() => anvil.stop());

  const byKind = (kind: DeployedToken['kind']): DeployedToken => tokens.find((t) => t.kind === kind)!;

  test('deploys one token of each kind at distinct lower-case addresses', () => {
    assert.deepEqual(
      tokens.map((t) => t.kind),
      ['standard', 'six-decimals', 'capped', 'bytes32'],
    );
    assert.equal(new Set(tokens.map((t) => t.address)).size, 4);
    for (const t of tokens) assert.match(t.address, /^0x[0-9a-f]{40}$/);
  });

  test('name, symbol and decimals read back through eth_call match what was deployed', async () => {
    for (const [i, spec] of DEMO_TOKEN_SPECS.entries()) {
      const t = tokens[i]!;
      const meta = await readNameSymbol(anvil.url, t, t.kind === 'bytes32' ? 'bytes32' : 'string');
      assert.deepEqual(meta, { name: spec.name, symbol: spec.symbol });
      const decimals = decodeUint(await call(anvil.url, t.address, encodeCall(sel('decimals()'))));
      assert.equal(Number(decimals), spec.decimals);
      assert.equal(await totalSupply(anvil.url, t), spec.initialSupply);
      assert.equal(await balanceOf(anvil.url, t, t.deployer), spec.initialSupply);
    }
    assert.equal(byKind('six-decimals').decimals, 6);
  });

  test('the bytes32 token answers name() and symbol() with exactly one NUL-padded word', async () => {
    const t = byKind('bytes32');
    const raw = await call(anvil.url, t.address, encodeCall(sel('name()')));
    assert.equal(raw.length, 2 + 64, 'a bytes32 answer is one 32-byte word, not an ABI string');
    assert.equal(raw, `0x${Buffer.from('Bytes32 Demo').toString('hex').padEnd(64, '0')}`);
    // The string tokens answer an ABI string: offset, length, then data.
    const s = await call(anvil.url, byKind('standard').address, encodeCall(sel('name()')));
    assert.equal(Buffer.from(decodeStringBytes(s)).toString(), 'Demo Token');
    assert.ok(s.length > 2 + 64);
  });

  test('only the capped token has cap(); on the others the call reverts', async () => {
    const capData = encodeCall(CappedDemoToken.selectors['cap()']!);
    const capped = byKind('capped');
    assert.equal(decodeUint(await call(anvil.url, capped.address, capData)), capped.cap);
    assert.equal(capped.cap, 2n * 10n ** 27n);
    for (const kind of ['standard', 'six-decimals', 'bytes32'] as const) {
      await assert.rejects(call(anvil.url, byKind(kind).address, capData), RpcResponseError, kind);
      assert.equal(byKind(kind).cap, undefined);
    }
  });

  test('mint and burn emit Transfer from and to the zero address and move totalSupply', async () => {
    const t = byKind('standard');
    const [deployer, other] = await getAccounts(anvil.url);
    const supply = await totalSupply(anvil.url, t);
    const mintHash = await mintToken(anvil.url, t, { to: other!, amount: 500n });
    const burnHash = await burnToken(anvil.url, t, { amount: 200n, from: other! });
    assert.equal(await totalSupply(anvil.url, t), supply + 300n);
    assert.equal(await balanceOf(anvil.url, t, other!), 300n);
    const logs = await transferLogs(anvil.url, t.address);
    const mintLog = logs.find((l) => l.transactionHash === mintHash)!;
    const burnLog = logs.find((l) => l.transactionHash === burnHash)!;
    assert.deepEqual(mintLog.topics, [TRANSFER_TOPIC, topicOf(ZERO), topicOf(other!)]);
    assert.equal(BigInt(mintLog.data), 500n);
    assert.deepEqual(burnLog.topics, [TRANSFER_TOPIC, topicOf(other!), topicOf(ZERO)]);
    assert.equal(BigInt(burnLog.data), 200n);
    // Only the deployer may mint.
    await assert.rejects(
      mintToken(anvil.url, t, { to: other!, amount: 1n, from: other! }),
      TransactionRevertedError,
    );
    assert.notEqual(deployer, other);
  });

  test('the capped token refuses to mint past its cap', async () => {
    const t = byKind('capped');
    const room = t.cap! - (await totalSupply(anvil.url, t));
    await assert.rejects(
      mintToken(anvil.url, t, { to: t.deployer, amount: room + 1n }),
      TransactionRevertedError,
    );
    await mintToken(anvil.url, t, { to: t.deployer, amount: room });
    assert.equal(await totalSupply(anvil.url, t), t.cap);
  });

  test('deployToken accepts raw bytes, such as a name padded with NULs', async () => {
    const t = await deployToken(anvil.url, {
      kind: 'standard',
      name: Buffer.from('ETH\0\0\0'),
      symbol: 'ETH',
      decimals: 0,
      initialSupply: 1000n,
    });
    const raw = decodeStringBytes(await call(anvil.url, t.address, encodeCall(sel('name()'))));
    assert.deepEqual([...raw], [69, 84, 72, 0, 0, 0]);
    assert.equal(bytes32ToText(raw), 'ETH');
  });

  test('transferToken moves a balance and emits one Transfer', async () => {
    const t = byKind('six-decimals');
    const [deployer, , third] = await getAccounts(anvil.url);
    const hash = await transferToken(anvil.url, t, { from: deployer!, to: third!, amount: 1_234_567n });
    assert.equal(await balanceOf(anvil.url, t, third!), 1_234_567n);
    const logs = (await transferLogs(anvil.url, t.address)).filter((l) => l.transactionHash === hash);
    assert.equal(logs.length, 1);
    assert.deepEqual(logs[0]!.topics, [TRANSFER_TOPIC, topicOf(deployer!), topicOf(third!)]);
  });

  test('the demo NFT emits 4-topic Transfer logs with empty data', async () => {
    const nft = await deployDemoNft(anvil.url);
    const [, holder] = await getAccounts(anvil.url);
    await mintNft(anvil.url, nft, holder!);
    await mintNft(anvil.url, nft, holder!);
    const logs = await transferLogs(anvil.url, nft.address);
    assert.equal(logs.length, 2);
    for (const [i, log] of logs.entries()) {
      assert.equal(log.topics.length, 4);
      assert.equal(log.data, '0x');
      assert.equal(BigInt(log.topics[3]!), BigInt(i + 1));
    }
  });
});
