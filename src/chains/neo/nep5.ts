/**
 * NEP-5 transfers from `getapplicationlog` answers (neo-cli's ApplicationLogs plugin).
 *
 * What counts (docs/api.md#nep-5-transfers): notifications of executions with trigger `Application` whose VM
 * state has no FAULT, whose state is a 4-item Array (`"transfer"`, from, to, amount), with
 * 20-byte or empty addresses and a non-negative amount given as an Integer or as a
 * little-endian two's-complement ByteArray. Anything else is some other event: skipped.
 */
import { scriptHashHexToAddress } from './address.js';
import { hexToBytes, leBytesToBigInt } from './bytes.js';
import { invalid } from './errors.js';
import {
  InvalidStackItemError,
  isFaultState,
  isVmStateText,
  type NeoStackItem,
  parseStackItem,
} from './stack.js';
import type { Nep5Transfer } from './types.js';
import { isRecord, prefixed } from './validate.js';

/** One notification of an execution. */
export interface NeoNotification {
  /** The notifying contract, `0x` + 40 hex. */
  contract: string;
  state: NeoStackItem;
}

/** One execution of a transaction's scripts. */
export interface NeoExecution {
  /** `Application`, `Verification`, `ApplicationR`, `VerificationR`. */
  trigger: string;
  vmState: string;
  faulted: boolean;
  notifications: NeoNotification[];
}

/** A validated application log. */
export interface NeoApplicationLog {
  txid: string;
  executions: NeoExecution[];
}

/** Where a transaction sits, to place its transfers. */
export interface TransferContext {
  blockNumber: number;
  time: number;
  txIndex: number;
  txHash: string;
  /** Block-wide position of the transaction's first notification. */
  firstLogIndex: number;
}

const TXID = /^0x[0-9a-f]{64}$/;
const CONTRACT = /^0x[0-9a-fA-F]{40}$/;
/** `transfer` as UTF-8 hex. */
const TRANSFER_HEX = '7472616e73666572';
/** The VM refuses integers wider than 32 bytes, so a longer ByteArray is no amount. */
const MAX_INTEGER_BYTES = 32;

/**
 * Validates a `getapplicationlog` result. Both shapes are read: `{txid, executions: [...]}`
 * (ApplicationLogs 2.9 and later) and the older flat `{txid, vmstate, notifications, ...}`,
 * which has one Application execution. `expectedTxid` (`0x` + lower-case hex) must match.
 */
export function parseApplicationLog(raw: unknown, expectedTxid: string): NeoApplicationLog {
  const what = `getapplicationlog ${expectedTxid}`;
  if (!isRecord(raw)) throw invalid(`${what}: result is not an object`);
  const txid = typeof raw.txid === 'string' ? prefixed(raw.txid.toLowerCase()) : undefined;
  if (txid === undefined || !TXID.test(txid)) throw invalid(`${what}: txid is malformed`);
  if (txid !== expectedTxid) throw invalid(`${what}: the log is of another transaction (${txid})`);
  let rawExecutions: unknown[];
  if (Array.isArray(raw.executions)) rawExecutions = raw.executions;
  else if (raw.executions === undefined && raw.vmstate !== undefined) {
    rawExecutions = [{ trigger: 'Application', vmstate: raw.vmstate, notifications: raw.notifications }];
  } else throw invalid(`${what}: executions is not an array`);
  const executions = rawExecutions.map((execution, e) => {
    const at = `${what}: executions[${e}]`;
    if (!isRecord(execution)) throw invalid(`${at} is not an object`);
    const trigger = execution.trigger;
    if (typeof trigger !== 'string' || !/^[A-Za-z]+$/.test(trigger))
      throw invalid(`${at}.trigger is malformed`);
    const vmState = execution.vmstate;
    if (!isVmStateText(vmState)) throw invalid(`${at}.vmstate is not a VM state`);
    const rawNotifications = execution.notifications ?? [];
    if (!Array.isArray(rawNotifications)) throw invalid(`${at}.notifications is not an array`);
    const notifications = rawNotifications.map((notification, n): NeoNotification => {
      if (!isRecord(notification)) throw invalid(`${at}.notifications[${n}] is not an object`);
      const contract = notification.contract;
      if (typeof contract !== 'string' || !CONTRACT.test(contract)) {
        throw invalid(`${at}.notifications[${n}].contract is not a contract hash`);
      }
      let state: NeoStackItem;
      try {
        state = parseStackItem(notification.state, `${at}.notifications[${n}].state`);
      } catch (error) {
        if (error instanceof InvalidStackItemError) throw invalid(error.message);
        throw error;
      }
      return { contract: contract.toLowerCase(), state };
    });
    return { trigger, vmState, faulted: isFaultState(vmState), notifications };
  });
  return { txid, executions };
}

/** True when an `Application` execution of the log FAULTed. */
export function logFaulted(log: NeoApplicationLog): boolean {
  return log.executions.some((e) => e.trigger === 'Application' && e.faulted);
}

/** Number of notifications in the log (every execution): the block-wide positions it takes. */
export function notificationCount(log: NeoApplicationLog): number {
  let count = 0;
  for (const execution of log.executions) count += execution.notifications.length;
  return count;
}

/** The NEP-5 transfers of one transaction's log, in notification order. */
export function decodeNep5Transfers(log: NeoApplicationLog, context: TransferContext): Nep5Transfer[] {
  const transfers: Nep5Transfer[] = [];
  let notifyIndex = 0;
  for (const execution of log.executions) {
    const counts = execution.trigger === 'Application' && !execution.faulted;
    for (const notification of execution.notifications) {
      const position = notifyIndex++;
      if (!counts) continue;
      const decoded = decodeTransferState(notification.state);
      if (decoded === undefined) continue;
      transfers.push({
        token: notification.contract,
        blockNumber: context.blockNumber,
        logIndex: context.firstLogIndex + position,
        txIndex: context.txIndex,
        txHash: context.txHash,
        from: decoded.fromScriptHash === null ? '' : scriptHashHexToAddress(decoded.fromScriptHash),
        to: decoded.toScriptHash === null ? '' : scriptHashHexToAddress(decoded.toScriptHash),
        value: decoded.value,
        time: context.time,
        notifyIndex: position,
        fromScriptHash: decoded.fromScriptHash,
        toScriptHash: decoded.toScriptHash,
        amountEncoding: decoded.amountEncoding,
      });
    }
  }
  return transfers;
}

interface DecodedTransferState {
  fromScriptHash: string | null;
  toScriptHash: string | null;
  value: bigint;
  amountEncoding: 'ByteArray' | 'Integer';
}

/** The parts of a `transfer` notification state, or undefined when it is not one. */
export function decodeTransferState(state: NeoStackItem): DecodedTransferState | undefined {
  if (state.type !== 'Array' || state.value.length !== 4) return undefined;
  const [name, from, to, amount] = state.value as [NeoStackItem, NeoStackItem, NeoStackItem, NeoStackItem];
  const isTransfer =
    (name.type === 'ByteArray' && name.value === TRANSFER_HEX) ||
    (name.type === 'String' && name.value === 'transfer');
  if (!isTransfer) return undefined;
  const fromScriptHash = accountOf(from);
  const toScriptHash = accountOf(to);
  if (fromScriptHash === undefined || toScriptHash === undefined) return undefined;
  let value: bigint;
  let amountEncoding: 'ByteArray' | 'Integer';
  if (amount.type === 'Integer') {
    value = amount.value;
    amountEncoding = 'Integer';
  } else if (amount.type === 'ByteArray' && amount.value.length <= MAX_INTEGER_BYTES * 2) {
    value = leBytesToBigInt(hexToBytes(amount.value));
    amountEncoding = 'ByteArray';
  } else return undefined;
  if (value < 0n) return undefined;
  return { fromScriptHash, toScriptHash, value, amountEncoding };
}

/** A 20-byte account (bare hex), null for the empty one, undefined when it is neither. */
function accountOf(item: NeoStackItem): string | null | undefined {
  if (item.type !== 'ByteArray') return undefined;
  if (item.value === '') return null;
  return item.value.length === 40 ? item.value : undefined;
}
