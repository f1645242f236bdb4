/** Validation of `getcontractstate` and `getassetstate` answers. */
import { assetNames } from './contracts.js';
import { invalid } from './errors.js';
import type { NeoAssetState, NeoContractState } from './types.js';
import { address, fixed8, hash160, hash256, hex, record, text, uint } from './validate.js';

/**
 * A `getcontractstate` answer for `expectedHash`. Both shapes are read: `properties:
 * {storage, dynamic_invoke}` (neo-cli 2.7 and later) and a top-level `storage` (older). The
 * script is not checked against the hash: some recordings truncate it.
 */
export function parseContractState(raw: unknown, expectedHash: string): NeoContractState {
  const path = `getcontractstate ${expectedHash}`;
  const c = record(raw, path);
  const hash = hash160(c.hash, `${path}.hash`);
  if (hash !== expectedHash) throw invalid(`${path}: answered contract ${hash}`);
  let needsStorage: unknown = c.storage;
  if (c.properties !== undefined) needsStorage = record(c.properties, `${path}.properties`).storage;
  if (typeof needsStorage !== 'boolean') throw invalid(`${path}: storage is not a boolean`);
  return {
    hash,
    name: text(c.name ?? '', `${path}.name`),
    author: text(c.author ?? '', `${path}.author`),
    version: text(c.code_version ?? '', `${path}.code_version`),
    email: text(c.email ?? '', `${path}.email`),
    description: text(c.description ?? '', `${path}.description`),
    needsStorage,
    script: hex(c.script, `${path}.script`),
  };
}

/** A `getassetstate` answer for `expectedId`. */
export function parseAssetState(raw: unknown, expectedId: string): NeoAssetState {
  const path = `getassetstate ${expectedId}`;
  const a = record(raw, path);
  const id = hash256(a.id, `${path}.id`);
  if (id !== expectedId) throw invalid(`${path}: answered asset ${id}`);
  const names = assetNames(a.name, `${path}.name`);
  const amount = fixed8(a.amount, `${path}.amount`, true);
  return {
    id,
    type: text(a.type, `${path}.type`),
    name: (names.find((entry) => entry.lang === 'en') ?? names[0])?.name ?? '',
    names,
    // Minus one unit is NEO's "no limit".
    amount: amount < 0n ? null : amount,
    available: fixed8(a.available, `${path}.available`),
    precision: uint(a.precision, `${path}.precision`, 8),
    owner: hex(a.owner, `${path}.owner`),
    admin: address(a.admin, `${path}.admin`),
    issuer: address(a.issuer, `${path}.issuer`),
  };
}
