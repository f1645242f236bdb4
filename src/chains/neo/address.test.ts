import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { createBase58check } from '@scure/base';
import {
  addressToContractHash,
  addressToScriptHashHex,
  contractHashOfScript,
  contractHashToAddress,
  InvalidNeoAddressError,
  isNeoAddress,
  scriptHashHexToAddress,
  verificationScriptToAddress,
} from './address.js';
import { loadExpectedNep5Transfers, loadNeoscanRecordings, loadRpcCases } from './testing/recordings.js';

const expected = Object.values(loadExpectedNep5Transfers()).flat();

describe('NEO addresses', () => {
  test('script hashes of the recorded transfers encode to the recorded base58 addresses and back', () => {
    const pairs = expected.flatMap((t) => [
      [t.from_scripthash, t.from_address],
      [t.to_scripthash, t.to_address],
    ]);
    const accounts = pairs.filter((p): p is [string, string] => p[0] !== null && p[1] !== null);
    assert.ok(accounts.length >= 8);
    for (const [hash, address] of accounts) {
      assert.equal(scriptHashHexToAddress(hash), address);
      assert.equal(addressToScriptHashHex(address), hash);
      assert.equal(isNeoAddress(address), true);
    }
  });

  test('the 0x form is the stored script hash reversed (TestNet getaccountstate)', () => {
    const account = loadRpcCases().find((c) => c.name === 'getAccountState')!;
    const address = account.params[0] as string;
    const scriptHash = (account.response.result as { script_hash: string }).script_hash;
    assert.equal(addressToContractHash(address), scriptHash);
    assert.equal(contractHashToAddress(scriptHash), address);
    assert.equal(contractHashToAddress(scriptHash.slice(2).toUpperCase()), address);
  });

  test('a witness verification script names the account that signs: claims pay their claimer', () => {
    const recordings = loadNeoscanRecordings();
    const claims = recordings.blocks
      .flatMap(
        (b) => b.tx as { type: string; scripts: { verification: string }[]; vout: { address: string }[] }[],
      )
      .filter((tx) => tx.type === 'ClaimTransaction');
    assert.ok(claims.length >= 15);
    for (const claim of claims) {
      assert.equal(verificationScriptToAddress(claim.scripts[0]!.verification), claim.vout[0]!.address);
    }
    assert.equal(verificationScriptToAddress(''), null);
  });

  test('the hash of a published script is the hash its PublishTransaction names', () => {
    const publish = loadNeoscanRecordings().transactions.find((tx) => tx.type === 'PublishTransaction')!;
    const code = (publish.contract as { code: { hash: string; script: string } }).code;
    assert.equal(contractHashOfScript(code.script), code.hash);
  });

  test('bad checksums, lengths and version bytes are refused', () => {
    const good = expected[0]!.to_address!;
    const flipped = good.slice(0, -1) + (good.endsWith('a') ? 'b' : 'a');
    assert.equal(isNeoAddress(flipped), false);
    assert.throws(() => addressToScriptHashHex(flipped), InvalidNeoAddressError);
    const check = createBase58check((data: Uint8Array) => createHash('sha256').update(data).digest());
    const hash = Buffer.from(expected[0]!.to_scripthash!, 'hex');
    // NEO N3 uses version 0x35: a valid base58check string, but not a NEO 2.x address.
    const n3 = check.encode(Uint8Array.from([0x35, ...hash]));
    assert.throws(() => addressToScriptHashHex(n3), /version byte 0x35/);
    const short = check.encode(Uint8Array.from([0x17, ...hash.subarray(1)]));
    assert.throws(() => addressToScriptHashHex(short), /20 bytes|21|bytes/);
    assert.equal(isNeoAddress(''), false);
    assert.equal(isNeoAddress(42), false);
    assert.throws(() => scriptHashHexToAddress('abcd'), InvalidNeoAddressError);
    assert.throws(() => contractHashToAddress('0x1234'), InvalidNeoAddressError);
  });
});
