import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { TransferRecord } from '../../internal/records.js';
import { InvalidRpcResponseError } from './errors.js';
import { decodeNep5Transfers, logFaulted, notificationCount, parseApplicationLog } from './nep5.js';
import { loadExpectedNep5Transfers, loadNeoscanRecordings } from './testing/recordings.js';
import type { Nep5Transfer } from './types.js';

const recordings = loadNeoscanRecordings();
const expected = loadExpectedNep5Transfers();
const context = (txHash: string, firstLogIndex = 0) => ({
  blockNumber: 7,
  time: 1_500_000_000,
  txIndex: 3,
  txHash,
  firstLogIndex,
});
/** A deep copy of a recorded log, to derive variants from real data. */
const recordedLog = (txid: string): { txid: string; executions: Record<string, unknown>[] } =>
  structuredClone(recordings.applicationLogs.find((l) => l.txid === txid)!.result) as never;
const decode = (raw: unknown, txid: string) =>
  decodeNep5Transfers(parseApplicationLog(raw, txid), context(txid));

describe('NEP-5 transfers from application logs', () => {
  test('decode exactly the transfers neo-scan expects, base58 addresses included', () => {
    assert.equal(Object.keys(expected).length, 4);
    for (const [bareTxid, rows] of Object.entries(expected)) {
      const recorded = recordings.applicationLogs.find((l) => l.txid === `0x${bareTxid}`);
      assert.ok(recorded, bareTxid);
      // The FAULT copy names the transaction it was copied from; read it under that id.
      const txid = (recorded.result as { txid: string }).txid;
      const transfers = decode(recorded.result, txid);
      const counted = rows.filter((row) => row.counted);
      assert.deepEqual(
        transfers.map((t) => ({
          contract: t.token,
          notify_index: t.notifyIndex,
          from_scripthash: t.fromScriptHash,
          from_address: t.from === '' ? null : t.from,
          to_scripthash: t.toScriptHash,
          to_address: t.to === '' ? null : t.to,
          amount_raw: t.value.toString(),
          amount_encoding: t.amountEncoding,
        })),
        counted.map(({ vmstate: _v, counted: _c, ...row }) => row),
        bareTxid,
      );
    }
  });

  test('the FAULT copy counts no transfer; the HALT original counts one', () => {
    const original = recordedLog('0xd9da12cf0b61fe19188d6f94f004c792af948db25772f440d1ce04152d806bf4');
    const faultCopy = recordedLog('0xd9da12cf0b61fe19188d6f94f004c792af948db25772f440d1ce04152d806bf5');
    const log = parseApplicationLog(faultCopy, faultCopy.txid);
    assert.equal(logFaulted(log), true);
    assert.equal(notificationCount(log), 1);
    assert.deepEqual(decodeNep5Transfers(log, context(faultCopy.txid)), []);
    assert.equal(decode(original, original.txid).length, 1);
  });

  test('RPX deploy mints from "" and places the transfers in the block', () => {
    const txid = '0xc920b2192e74eda4ca6140510813aa40fef1767d00c152aa6f8027c24bdf14f2';
    const transfers = decodeNep5Transfers(parseApplicationLog(recordedLog(txid), txid), context(txid, 10));
    assert.deepEqual(
      transfers.map((t) => [t.from, t.logIndex, t.notifyIndex, t.blockNumber, t.txIndex, t.txHash, t.time]),
      [0, 1, 2].map((i) => ['', 10 + i, i, 7, 3, txid, 1_500_000_000]),
    );
    // The store keeps these as they are: they are TransferRecords.
    const asRecords: TransferRecord[] = transfers satisfies Nep5Transfer[];
    assert.equal(asRecords.length, 3);
  });

  test('other events and other shapes are not transfers', () => {
    const txid = '0x02e17fbff2921c70abd8828e8b0ef82fb2e3a76238c5f296a7d0b9b8a00c0ff4';
    type State = { type: string; value: { type: string; value: unknown }[] };
    const variant = (edit: (state: State, execution: Record<string, unknown>) => void) => {
      const log = recordedLog(txid);
      const execution = log.executions[0]!;
      edit((execution.notifications as { state: State }[])[0]!.state, execution);
      return decode(log, txid).length;
    };
    assert.equal(
      variant(() => {}),
      1,
    );
    assert.equal(
      variant((_s, e) => {
        e.trigger = 'Verification';
      }),
      0,
    );
    assert.equal(
      variant((s) => {
        s.value.pop();
      }),
      0,
    );
    assert.equal(
      variant((s) => {
        s.value[0]!.value = '5472616e73666572'; // "Transfer"
      }),
      0,
    );
    assert.equal(
      variant((s) => {
        s.value[1]!.value = (s.value[1]!.value as string).slice(2); // 19 bytes
      }),
      0,
    );
    assert.equal(
      variant((s) => {
        s.value[3] = { type: 'Integer', value: '-5' };
      }),
      0,
    );
    assert.equal(
      variant((s) => {
        s.value[3] = { type: 'ByteArray', value: 'ff' }; // -1
      }),
      0,
    );
    assert.equal(
      variant((s) => {
        s.value[3] = { type: 'Boolean', value: true };
      }),
      0,
    );
    assert.equal(
      variant((s) => {
        s.type = 'Struct';
      }),
      0,
    );
    assert.equal(
      variant((s) => {
        s.value[0] = { type: 'String', value: 'transfer' };
      }),
      1,
    );
    assert.equal(
      variant((s) => {
        s.value[2]!.value = ''; // a burn
      }),
      1,
    );
  });

  test('positions count every notification, transfers or not', () => {
    const txid = '0x02e17fbff2921c70abd8828e8b0ef82fb2e3a76238c5f296a7d0b9b8a00c0ff4';
    const log = recordedLog(txid);
    const notifications = log.executions[0]!.notifications as unknown[];
    notifications.unshift({
      contract: '0xacbc532904b6b51b5ea6d19b803d78af70e7e6f9',
      state: { type: 'Array', value: [{ type: 'ByteArray', value: '617070726f7665' }] },
    });
    const parsed = parseApplicationLog(log, txid);
    const [transfer] = decodeNep5Transfers(parsed, context(txid, 4));
    assert.equal(transfer?.notifyIndex, 1);
    assert.equal(transfer?.logIndex, 5);
    assert.equal(notificationCount(parsed), 2);
  });

  test('the flat log of early ApplicationLogs versions reads as one Application execution', () => {
    const txid = '0xd9da12cf0b61fe19188d6f94f004c792af948db25772f440d1ce04152d806bf4';
    const { executions } = recordedLog(txid);
    const execution = executions[0]!;
    const flat = { txid, vmstate: execution.vmstate, notifications: execution.notifications };
    assert.equal(decode(flat, txid).length, 1);
  });

  test('malformed logs are invalid answers', () => {
    const txid = '0x02e17fbff2921c70abd8828e8b0ef82fb2e3a76238c5f296a7d0b9b8a00c0ff4';
    const broken: [(log: Record<string, unknown>) => void, RegExp][] = [
      [(log) => (log.txid = 'zz'), /txid is malformed/],
      [(log) => (log.executions = {}), /executions is not an array/],
      [(log) => ((log.executions as Record<string, unknown>[])[0]!.vmstate = 7), /vmstate is not a VM state/],
      [
        (log) => ((log.executions as Record<string, unknown>[])[0]!.notifications = 'x'),
        /notifications is not/,
      ],
      [
        (log) =>
          ((
            (log.executions as Record<string, unknown>[])[0]!.notifications as { contract: string }[]
          )[0]!.contract = '0x12'),
        /contract is not a contract hash/,
      ],
      [
        (log) =>
          ((
            (log.executions as Record<string, unknown>[])[0]!.notifications as { state: unknown }[]
          )[0]!.state = {
            type: 'ByteArray',
            value: 'xyz',
          }),
        /state: ByteArray value is not hex/,
      ],
    ];
    for (const [edit, message] of broken) {
      const log = recordedLog(txid) as unknown as Record<string, unknown>;
      edit(log);
      assert.throws(() => parseApplicationLog(log, txid), InvalidRpcResponseError);
      assert.throws(() => parseApplicationLog(log, txid), message);
    }
    // The FAULT copy answers for the transaction it was copied from: not the one asked for.
    const copy = recordedLog('0xd9da12cf0b61fe19188d6f94f004c792af948db25772f440d1ce04152d806bf5');
    assert.throws(
      () => parseApplicationLog(copy, '0xd9da12cf0b61fe19188d6f94f004c792af948db25772f440d1ce04152d806bf5'),
      /the log is of another transaction/,
    );
  });
});
