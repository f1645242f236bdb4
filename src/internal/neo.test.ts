import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fixed8ToAssetUnits, NEO_ADDRESS_VERSION, neoAddressProblem, neoBase58check } from './neo.js';

/** Real NEO 2.x addresses. */
const VALID = ['AQVh2pG732YvtNaxEGkQUei3YA4cvo7d2i', 'Abf2qMs1pzQb8kYk9RuxtUb9jtRKJVuBJt'];

describe('NEO addresses', () => {
  test('real addresses pass', () => {
    for (const address of VALID) assert.equal(neoAddressProblem(address), null);
  });

  test('one changed character breaks the checksum', () => {
    const address = VALID[0]!;
    const last = address.at(-1) === 'i' ? 'j' : 'i';
    assert.equal(neoAddressProblem(address.slice(0, -1) + last), 'checksum');
  });

  test('length, first letter and alphabet are the form', () => {
    const address = VALID[0]!;
    for (const bad of [
      '',
      address.slice(1),
      `${address}1`,
      `B${address.slice(1)}`,
      `${address.slice(0, -1)}0`, // 0 is not base58
      `${address.slice(0, -1)}l`,
      `0x${'a'.repeat(40)}`,
    ]) {
      assert.equal(neoAddressProblem(bad), 'form', bad);
    }
  });

  test('a valid base58check of another version byte is refused', () => {
    // Version 0x17 + 20 bytes encodes to an A-address; another version of the same length may not.
    const payload = new Uint8Array(21);
    payload[0] = NEO_ADDRESS_VERSION + 1;
    const other = neoBase58check.encode(payload);
    assert.notEqual(neoAddressProblem(other), null);
    payload[0] = NEO_ADDRESS_VERSION;
    assert.equal(neoAddressProblem(neoBase58check.encode(payload)), null);
  });
});

describe('Fixed8 to asset units', () => {
  test('NEO (precision 0) and GAS (precision 8)', () => {
    assert.equal(fixed8ToAssetUnits(24_400_000_000n, 0), 244n);
    assert.equal(fixed8ToAssetUnits(123n, 8), 123n);
    assert.throws(() => fixed8ToAssetUnits(1n, 0), RangeError);
  });
});
