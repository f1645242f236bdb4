import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseBlock, parseTransaction } from './block.js';
import { decodeDeployments, englishName, scanInvocationScript } from './contracts.js';
import { InvalidRpcResponseError } from './errors.js';
import { findSyscalls, MalformedScriptError } from './script.js';
import { loadNeoscanRecordings } from './testing/recordings.js';
import { createContractScript, ScriptBuilder } from './testing/script-builder.js';
import type { NeoBlockTransaction } from './types.js';

const recordings = loadNeoscanRecordings();
const publishTx = recordings.transactions.find((tx) => tx.type === 'PublishTransaction')!;
const published = publishTx.contract as {
  author: string;
  description: string;
  email: string;
  name: string;
  version: string;
  needstorage: boolean;
  code: { hash: string; script: string; parameters: string[]; returntype: string };
};
/** The published AgencyContract's real code and fields, as a `Neo.Contract.Create` would pass them. */
const agencyArgs = {
  script: published.code.script,
  // Hash160, Hash256, Hash256, Hash160, Boolean, Integer, Signature → Boolean.
  parameterList: '03040403010200',
  returnType: 1,
  properties: 0,
  name: published.name,
  version: published.version,
  author: published.author,
  email: published.email,
  description: published.description,
};

const asBlockTx = (raw: unknown, faulted: boolean | null = false): NeoBlockTransaction => ({
  ...parseTransaction(raw, 'tx').tx,
  index: 1,
  faulted,
});
const invocation = (script: string) => ({
  txid: `0x${'ab'.repeat(32)}`,
  type: 'InvocationTransaction',
  version: 1,
  attributes: [],
  vin: [],
  vout: [],
  sys_fee: '490',
  net_fee: '0',
  scripts: publishTx.scripts,
  script,
  gas: '490',
});

describe('contract deployments', () => {
  test('PublishTransaction: the recorded AgencyContract with its witness as owner', () => {
    const parsed = parseTransaction(publishTx, 'publish');
    assert.ok(parsed.publish);
    const tx = { ...parsed.tx, index: 4, faulted: null };
    const { deployments } = decodeDeployments(
      { tx, publish: parsed.publish, register: null },
      { blockNumber: 9, time: 1499134416 },
    );
    assert.deepEqual(deployments, [
      {
        hash: published.code.hash,
        kind: 'PublishTransaction',
        name: 'AgencyContract',
        author: 'Erik Zhang',
        version: '2.0.1-preview2',
        email: 'erik@antshares.org',
        description: 'Agency Contract 2.0',
        needsStorage: false,
        blockNumber: 9,
        time: 1499134416,
        txHash: publishTx.txid,
        txIndex: 4,
        // The GAS change of the recorded transaction goes back to the same account.
        ownerAddress: (publishTx.vout as { address: string }[])[0]!.address,
      },
    ]);
  });

  test('a published hash that is not the hash of its script is refused', () => {
    const forged = structuredClone(publishTx) as { contract: { code: { hash: string } } };
    forged.contract.code.hash = `0x${'11'.repeat(20)}`;
    assert.throws(() => parseTransaction(forged, 'publish'), /not the hash of its script/);
  });

  test('Neo.Contract.Create with the real AgencyContract code deploys the hash it was published under', () => {
    for (const [syscall, kind] of [
      ['Neo.Contract.Create', 'Contract.Create'],
      ['AntShares.Contract.Create', 'Contract.Create'],
      ['Neo.Contract.Migrate', 'Contract.Migrate'],
    ] as const) {
      const script = createContractScript({ ...agencyArgs, properties: 1 }, syscall);
      const { contracts, unreadable, createsAsset } = scanInvocationScript(script);
      assert.equal(unreadable, 0);
      assert.equal(createsAsset, false);
      assert.deepEqual(contracts, [
        {
          hash: published.code.hash,
          kind,
          name: published.name,
          author: published.author,
          version: published.version,
          email: published.email,
          description: published.description,
          needsStorage: true,
        },
      ]);
    }
  });

  test('an invocation deploys only when it did not FAULT, with the first witness as owner', () => {
    const raw = invocation(createContractScript(agencyArgs));
    const run = (faulted: boolean) =>
      decodeDeployments(
        { tx: asBlockTx(raw, faulted), publish: null, register: null },
        { blockNumber: 5, time: 6 },
      );
    const ok = run(false);
    assert.equal(ok.deployments.length, 1);
    assert.equal(ok.deployments[0]!.ownerAddress, (publishTx.vout as { address: string }[])[0]!.address);
    assert.equal(ok.deployments[0]!.time, 6);
    assert.deepEqual(run(true).deployments, []);
  });

  test('computed arguments are reported as unreadable, not guessed', () => {
    // The script is taken from storage at run time: not a literal push.
    const script = new ScriptBuilder()
      .pushText('d')
      .pushText('e')
      .pushText('a')
      .pushText('v')
      .pushText('n')
      .pushInt(0)
      .pushInt(5)
      .pushHex('0710')
      .syscall('Neo.Storage.GetContext')
      .syscall('Neo.Contract.Create')
      .hex();
    const found = scanInvocationScript(script);
    assert.deepEqual(found.contracts, []);
    assert.equal(found.unreadable, 1);
    const { warnings } = decodeDeployments(
      { tx: asBlockTx(invocation(script)), publish: null, register: null },
      { blockNumber: 5, time: 6 },
    );
    assert.match(warnings[0]!, /arguments computed at run time/);
  });

  test('recorded invocations that call contracts deploy nothing (RPX deploy method, SetVotes)', () => {
    const deployBlock = recordings.blocks.find((b) => b.index === 1444843)!;
    const rpxCall = (deployBlock.tx as { type: string; script?: string }[]).find(
      (tx) => tx.type === 'InvocationTransaction',
    )!;
    const calls = findSyscalls(Buffer.from(rpxCall.script!, 'hex'));
    assert.deepEqual(calls, []);
    assert.deepEqual(scanInvocationScript(rpxCall.script!).contracts, []);
    const votes = recordings.transactions.find((tx) =>
      (tx.script as string | undefined)?.endsWith('566f746573'),
    )!;
    assert.deepEqual(
      findSyscalls(Buffer.from(votes.script as string, 'hex')).map((s) => s.name),
      ['Neo.Blockchain.GetAccount', 'Neo.Account.SetVotes'],
    );
    assert.deepEqual(scanInvocationScript(votes.script as string).contracts, []);
  });

  test('Asset.Create in an invocation registers an asset under the transaction id', () => {
    const script = new ScriptBuilder().pushInt(1).syscall('Neo.Asset.Create').hex();
    const tx = asBlockTx(invocation(script));
    const { registrations } = decodeDeployments(
      { tx, publish: null, register: null },
      { blockNumber: 5, time: 6 },
    );
    assert.deepEqual(
      registrations.map((r) => [r.assetId, r.kind, r.register]),
      [[tx.txid, 'Asset.Create', null]],
    );
  });

  test('genesis RegisterTransactions: NEO and GAS with their English names', () => {
    const genesis = parseBlock(
      recordings.blocks.find((b) => b.index === 0),
      0,
    );
    const registered = genesis.transactions.flatMap((t) =>
      t.register === null ? [] : [[t.tx.txid, t.register]],
    );
    assert.deepEqual(registered, [
      [
        '0xc56f33fc6ecfcd0c225c4ab356fee59390af8560be0e930faebe74a6daff7c9b',
        {
          type: 'GoverningToken',
          name: 'AntShare',
          amount: 10_000_000_000_000_000n,
          precision: 0,
          admin: 'Abf2qMs1pzQb8kYk9RuxtUb9jtRKJVuBJt',
        },
      ],
      [
        '0x602c79718b16e442de58778e148d0b1084e3b2dffd5de6b7b16cee7969282de7',
        {
          type: 'UtilityToken',
          name: 'AntCoin',
          amount: 10_000_000_000_000_000n,
          precision: 8,
          admin: 'AWKECj9RD8rS8RPcpCgYVjk1DeYyHwxZm3',
        },
      ],
    ]);
    assert.equal(englishName('NEO', 'name'), 'NEO');
    assert.equal(englishName([{ lang: 'zh-CN', name: '小蚁股' }], 'name'), '小蚁股');
    assert.equal(englishName(null, 'name'), '');
    // Whoever registers an asset chooses its names: capped and cleaned like a token's.
    assert.equal(englishName(`\u202e${'A'.repeat(1000)}`, 'name'), 'A'.repeat(128));
    assert.equal(englishName([{ lang: 'en', name: 'Evil\u0000\u0007 Asset\n' }], 'name'), 'Evil Asset');
    assert.throws(() => englishName(5, 'name'), InvalidRpcResponseError);
  });
});

describe('script reader', () => {
  test('every push form is read and skipped exactly', () => {
    const long = 'ab'.repeat(300);
    const script = new ScriptBuilder()
      .pushHex('')
      .pushHex('01')
      .pushHex('cd'.repeat(100)) // PUSHDATA1
      .pushHex(long) // PUSHDATA2
      .pushInt(-1)
      .pushInt(16)
      .raw('61') // NOP keeps the tracked stack
      .syscall('Test.Call')
      .hex();
    const [site] = findSyscalls(Buffer.from(script, 'hex'));
    assert.equal(site?.name, 'Test.Call');
    assert.deepEqual(
      site?.stack.map((v) => ('bytes' in v ? Buffer.from(v.bytes).toString('hex') : 'unknown')),
      ['', '01', 'cd'.repeat(100), long, 'ff', '10'],
    );
  });

  test('operands of jumps and calls are skipped; their effect makes the stack unknown', () => {
    const script = new ScriptBuilder()
      .pushInt(1)
      .raw('620300') // JMP +3
      .appcall(`0x${'68'.repeat(20)}`) // an operand full of SYSCALL bytes
      .pushInt(2)
      .syscall('After')
      .hex();
    const sites = findSyscalls(Buffer.from(script, 'hex'));
    assert.deepEqual(
      sites.map((s) => [s.name, s.stack.length, 'unknown' in s.stack[0]!]),
      [['After', 2, true]],
    );
  });

  test('an operand running past the end is a malformed script', () => {
    for (const hex of ['05aabb', '4c05aa', '4d0001', '67aabb', '6805ab']) {
      assert.throws(() => findSyscalls(Buffer.from(hex, 'hex')), MalformedScriptError, hex);
    }
    assert.deepEqual(scanInvocationScript('4c05aa'), { contracts: [], unreadable: 1, createsAsset: false });
  });
});
