/**
 * Validation of verbose `getblock` / `getrawtransaction` answers, and the decoding of a block
 * with the application logs of its invocations into what the indexer stores.
 */
import { verificationScriptToAddress } from './address.js';
import {
  type DeployedContract,
  decodeDeployments,
  parsePublishedContract,
  parseRegisteredAsset,
  type RegisteredAsset,
} from './contracts.js';
import { invalid } from './errors.js';
import { decodeNep5Transfers, logFaulted, type NeoApplicationLog, notificationCount } from './nep5.js';
import type {
  NeoAttribute,
  NeoBlock,
  NeoBlockTransaction,
  NeoOutput,
  NeoOutputRef,
  NeoRawTransaction,
  NeoTransaction,
  NeoTransactionType,
  NeoWitness,
} from './types.js';
import { address, array, fixed8, hash256, hex, record, text, uint } from './validate.js';

const TRANSACTION_TYPES = new Set<string>([
  'MinerTransaction',
  'IssueTransaction',
  'ClaimTransaction',
  'EnrollmentTransaction',
  'RegisterTransaction',
  'ContractTransaction',
  'StateTransaction',
  'PublishTransaction',
  'InvocationTransaction',
]);

/** A transaction with the parts only deployments need. */
export interface ParsedTransaction {
  tx: NeoTransaction;
  publish: DeployedContract | null;
  register: RegisteredAsset | null;
}

/** A validated block before its application logs are joined. */
export interface ParsedBlock {
  index: number;
  hash: string;
  previousHash: string;
  time: number;
  transactions: ParsedTransaction[];
}

/** Validates one verbose transaction (`path` names it in error messages). */
export function parseTransaction(raw: unknown, path: string): ParsedTransaction {
  const t = record(raw, path);
  const txid = hash256(t.txid, `${path}.txid`);
  const type = t.type;
  if (typeof type !== 'string' || !TRANSACTION_TYPES.has(type)) {
    throw invalid(`${path}.type ${JSON.stringify(type)} is not a NEO 2.x transaction type`);
  }
  const inputs = array(t.vin, `${path}.vin`).map((input, i) => outputRef(input, `${path}.vin[${i}]`));
  const outputs = array(t.vout, `${path}.vout`).map((output, i): NeoOutput => {
    const at = `${path}.vout[${i}]`;
    const o = record(output, at);
    if (uint(o.n, `${at}.n`) !== i) throw invalid(`${at}.n is not its position ${i}`);
    return {
      n: i,
      asset: hash256(o.asset, `${at}.asset`),
      value: fixed8(o.value, `${at}.value`),
      address: address(o.address, `${at}.address`),
    };
  });
  const claims =
    type === 'ClaimTransaction'
      ? array(t.claims, `${path}.claims`).map((claim, i) => outputRef(claim, `${path}.claims[${i}]`))
      : [];
  const witnesses = array(t.scripts, `${path}.scripts`).map((witness, i): NeoWitness => {
    const w = record(witness, `${path}.scripts[${i}]`);
    return {
      invocation: hex(w.invocation, `${path}.scripts[${i}].invocation`),
      verification: hex(w.verification, `${path}.scripts[${i}].verification`),
    };
  });
  const attributes = array(t.attributes ?? [], `${path}.attributes`).map((attribute, i): NeoAttribute => {
    const a = record(attribute, `${path}.attributes[${i}]`);
    const usage =
      typeof a.usage === 'number' ? String(a.usage) : text(a.usage, `${path}.attributes[${i}].usage`);
    return { usage, data: hex(a.data, `${path}.attributes[${i}].data`) };
  });
  const tx: NeoTransaction = {
    txid,
    type: type as NeoTransactionType,
    inputs,
    outputs,
    claims,
    sysFee: fixed8(t.sys_fee ?? '0', `${path}.sys_fee`),
    netFee: fixed8(t.net_fee ?? '0', `${path}.net_fee`),
    witnesses,
    firstWitnessAddress:
      witnesses[0] === undefined ? null : verificationScriptToAddress(witnesses[0].verification),
    attributes,
    script: type === 'InvocationTransaction' ? hex(t.script, `${path}.script`) : null,
  };
  return {
    tx,
    publish: type === 'PublishTransaction' ? parsePublishedContract(t.contract, `${path}.contract`) : null,
    register: type === 'RegisterTransaction' ? parseRegisteredAsset(t.asset, `${path}.asset`) : null,
  };
}

/** Validates a verbose `getrawtransaction` answer for `expectedTxid`. */
export function parseRawTransaction(raw: unknown, expectedTxid: string): NeoRawTransaction {
  const path = `getrawtransaction ${expectedTxid}`;
  const { tx } = parseTransaction(raw, path);
  if (tx.txid !== expectedTxid) throw invalid(`${path}: answered transaction ${tx.txid}`);
  const t = raw as Record<string, unknown>;
  const included = t.blockhash !== undefined && t.blockhash !== null;
  return {
    ...tx,
    blockHash: included ? hash256(t.blockhash, `${path}.blockhash`) : null,
    blockTime: included ? uint(t.blocktime, `${path}.blocktime`) : null,
  };
}

/** Validates a verbose `getblock` answer for height `expectedIndex`. */
export function parseBlock(raw: unknown, expectedIndex: number): ParsedBlock {
  const path = `getblock ${expectedIndex}`;
  const b = record(raw, path);
  const index = uint(b.index, `${path}.index`);
  if (index !== expectedIndex) throw invalid(`${path}: answered block ${index}`);
  const transactions = array(b.tx, `${path}.tx`).map((tx, i) => parseTransaction(tx, `${path}.tx[${i}]`));
  if (transactions[0]?.tx.type !== 'MinerTransaction') {
    throw invalid(`${path}: the first transaction is not a MinerTransaction`);
  }
  const seen = new Set<string>();
  for (const { tx } of transactions) {
    if (seen.has(tx.txid)) throw invalid(`${path}: transaction ${tx.txid} appears twice`);
    seen.add(tx.txid);
  }
  return {
    index,
    hash: hash256(b.hash, `${path}.hash`),
    previousHash: hash256(b.previousblockhash, `${path}.previousblockhash`),
    time: uint(b.time, `${path}.time`),
    transactions,
  };
}

/** Ids of the block's InvocationTransactions: the logs `decodeBlock` needs. */
export function invocationTxids(block: ParsedBlock): string[] {
  return block.transactions.flatMap(({ tx }) => (tx.type === 'InvocationTransaction' ? [tx.txid] : []));
}

/**
 * Joins a parsed block with the application logs of its invocations (keyed by txid) and
 * decodes NEP-5 transfers, contract deployments and asset registrations. A missing log is a
 * programming error here: the source fetches them all first.
 */
export function decodeBlock(
  block: ParsedBlock,
  logs: ReadonlyMap<string, NeoApplicationLog>,
): { block: NeoBlock; warnings: string[] } {
  const decoded: NeoBlock = {
    index: block.index,
    hash: block.hash,
    previousHash: block.previousHash,
    time: block.time,
    transactions: [],
    nep5Transfers: [],
    deployments: [],
    assetRegistrations: [],
  };
  const warnings: string[] = [];
  let logIndex = 0;
  block.transactions.forEach((parsed, index) => {
    let faulted: boolean | null = null;
    if (parsed.tx.type === 'InvocationTransaction') {
      const log = logs.get(parsed.tx.txid);
      if (log === undefined) throw new Error(`decodeBlock: no application log for ${parsed.tx.txid}`);
      faulted = logFaulted(log);
      const transfers = decodeNep5Transfers(log, {
        blockNumber: block.index,
        time: block.time,
        txIndex: index,
        txHash: parsed.tx.txid,
        firstLogIndex: logIndex,
      });
      for (const transfer of transfers) decoded.nep5Transfers.push(transfer);
      logIndex += notificationCount(log);
    }
    const tx: NeoBlockTransaction = { ...parsed.tx, index, faulted };
    decoded.transactions.push(tx);
    const found = decodeDeployments(
      { tx, publish: parsed.publish, register: parsed.register },
      { blockNumber: block.index, time: block.time },
    );
    for (const deployment of found.deployments) decoded.deployments.push(deployment);
    for (const registration of found.registrations) decoded.assetRegistrations.push(registration);
    for (const warning of found.warnings) warnings.push(`block ${block.index}: ${warning}`);
  });
  return { block: decoded, warnings };
}

function outputRef(raw: unknown, path: string): NeoOutputRef {
  const r = record(raw, path);
  return { txid: hash256(r.txid, `${path}.txid`), n: uint(r.vout, `${path}.vout`, 0xffff) };
}
