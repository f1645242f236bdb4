import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidRpcResponseError } from './errors.js';
import { parseAssetState, parseContractState } from './states.js';
import { loadNeoGoExamples, loadNeoscanRecordings, loadRpcCases } from './testing/recordings.js';

const recordings = loadNeoscanRecordings();
const NEO = '0xc56f33fc6ecfcd0c225c4ab356fee59390af8560be0e930faebe74a6daff7c9b';
const RPX = '0xecc6b20d3ccac1ee9ef109af5a7cdb85706b1df9';

describe('node state answers', () => {
  test('the NEO asset state (mainnet)', () => {
    const state = parseAssetState(recordings.assets[0], NEO);
    assert.deepEqual(state, {
      id: NEO,
      type: 'GoverningToken',
      name: 'AntShare',
      names: [
        { lang: 'zh-CN', name: '小蚁股' },
        { lang: 'en', name: 'AntShare' },
      ],
      amount: 100_000_000n * 100_000_000n,
      available: 100_000_000n * 100_000_000n,
      precision: 0,
      owner: '00',
      admin: 'Abf2qMs1pzQb8kYk9RuxtUb9jtRKJVuBJt',
      issuer: 'Abf2qMs1pzQb8kYk9RuxtUb9jtRKJVuBJt',
    });
  });

  test('asset states of other nodes: TestNet neo-cli, neo-go (a plain-string name), an unlimited asset', () => {
    const testnet = loadRpcCases().find((c) => c.name === 'getAssetState')!.response.result;
    assert.equal(parseAssetState(testnet, NEO).name, 'AntShare');
    const neoGo = loadNeoGoExamples().find((e) => e.method === 'getassetstate')!.response.result;
    const state = parseAssetState(neoGo, NEO);
    assert.equal(state.name, 'NEO');
    assert.equal(state.issuer, 'AFmseVrdL9f9oyCzZefL9tG6UbvhPbdYzM');
    const unlimited = { ...(recordings.assets[0] as object), amount: '-0.00000001' };
    assert.equal(parseAssetState(unlimited, NEO).amount, null);
  });

  test('the RPX contract state (mainnet, script truncated by neo-scan)', () => {
    const state = parseContractState(recordings.contracts[0], RPX);
    assert.deepEqual(state, {
      hash: RPX,
      name: 'RPX Sale',
      author: 'Red Pulse',
      version: '1.0',
      email: 'rpx@red-pulse.com',
      description: 'RPX Sale',
      needsStorage: true,
      script: '011f',
    });
  });

  test('contract states of other nodes: TestNet neo-cli 2.3 (top-level storage), neo-go', () => {
    const testnet = loadRpcCases().find((c) => c.name === 'getContractState')!;
    const state = parseContractState(testnet.response.result, `0x${testnet.params[0] as string}`);
    assert.deepEqual([state.name, state.author, state.needsStorage], ['rpx', '1', true]);
    const neoGo = loadNeoGoExamples().find((e) => e.method === 'getcontractstate')!.response.result;
    const woolong = parseContractState(neoGo, '0xdc675afc61a7c0f7b3d2682bf6e1d8ed865a0e5f');
    assert.deepEqual([woolong.name, woolong.author, woolong.version], ['Woolong', 'lllwvlvwlll', '0.9.2']);
  });

  test('an answer for another id, or with bad fields, is invalid', () => {
    assert.throws(() => parseAssetState(recordings.assets[0], `0x${'11'.repeat(32)}`), /answered asset/);
    assert.throws(
      () => parseContractState(recordings.contracts[0], `0x${'11'.repeat(20)}`),
      /answered contract/,
    );
    const bad = [
      { ...(recordings.assets[0] as object), precision: 9 },
      { ...(recordings.assets[0] as object), available: '-1' },
      { ...(recordings.assets[0] as object), admin: 'nope' },
      { ...(recordings.assets[0] as object), name: 3 },
    ];
    for (const raw of bad) assert.throws(() => parseAssetState(raw, NEO), InvalidRpcResponseError);
    const noStorage = { ...(recordings.contracts[0] as object), properties: {} };
    assert.throws(() => parseContractState(noStorage, RPX), /storage is not a boolean/);
  });
});
