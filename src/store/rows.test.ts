import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeChainStatus, decodeTokenRow, withNeoFields } from './rows.js';

const ROW = {
  address: 'A',
  name: 'n',
  symbol: 's',
  decimals: 8,
  total_supply: '10',
  cap: null,
  burned_balance: '1',
  holder_count: 2,
  transfer_count: 3,
  first_block: 4,
  icon: '',
};
const DECODERS = {
  address: (v: string) => `0x${v.toLowerCase()}`,
  text: (v: string) => v.toUpperCase(),
  amount: (v: string | null) => (v === null ? null : BigInt(v)),
};
const NEO = {
  asset_type: 'GoverningToken',
  registered_time: 100,
  registrar: 'AReg',
  contract_time: 200,
  contract_owner: 'AOwner',
};

describe('store rows', () => {
  test('a token row decodes through the backend decoders', () => {
    assert.deepEqual(decodeTokenRow('neo', ROW, DECODERS), {
      chain: 'neo',
      address: '0xa',
      name: 'N',
      symbol: 'S',
      decimals: 8,
      totalSupply: 10n,
      cap: null,
      burnedBalance: 1n,
      holderCount: 2,
      transferCount: 3,
      firstBlock: 4,
      icon: '',
    });
  });

  test('a NEP-5 hash takes its contract deployment, an asset its registration', () => {
    const token = decodeTokenRow('neo', ROW, DECODERS);
    const nep5 = withNeoFields({ ...token, address: `0x${'ab'.repeat(20)}` }, NEO);
    assert.deepEqual([nep5.category, nep5.createdAt, nep5.creator], ['NEP5', 200, 'AOwner']);
    const asset = withNeoFields({ ...token, address: `0x${'ab'.repeat(32)}` }, NEO);
    assert.deepEqual([asset.category, asset.createdAt, asset.creator], ['GoverningToken', 100, 'AReg']);
    assert.equal(withNeoFields(token, { ...NEO, asset_type: null }).category, 'Token');
  });

  test('a chain status leaves unset fields absent', () => {
    const row = {
      chain: 'c',
      head: 9,
      indexed_block: null,
      last_error: null,
      updated_at: 1,
      seed_block: null,
    };
    assert.deepEqual(Object.keys(decodeChainStatus(row, false)), [
      'chain',
      'head',
      'indexed',
      'lastError',
      'updatedAt',
    ]);
    const writer = { id: 'w', epoch: 1, since: 5 };
    assert.deepEqual(decodeChainStatus({ ...row, seed_block: 3 }, true, writer), {
      chain: 'c',
      head: 9,
      indexed: null,
      lastError: null,
      updatedAt: 1,
      writer,
      seedBlock: 3,
      holdersPartial: true,
    });
  });
});
