/**
 * Contract deployments and asset registrations of NEO 2.x transactions:
 * - PublishTransaction (the early way): the verbose transaction carries the contract.
 * - `Neo.Contract.Create` / `Neo.Contract.Migrate` (and their `AntShares.` names) called by an
 *   InvocationTransaction's script: the arguments are read from the literal pushes before the
 *   SYSCALL (how every SDK writes a deployment); the hash is the hash160 of the pushed script.
 * - RegisterTransaction, and `Neo.Asset.Create` in an invocation: a new global asset whose id
 *   is the transaction id.
 * A FAULTed invocation deploys nothing. Deployments made by a contract at run time (a
 * contract calling Create itself) are not visible in the transaction and are not reported.
 */
import { cleanTokenText, MAX_TOKEN_NAME_CHARS } from '../../internal/token-text.js';
import { contractHashOfScript } from './address.js';
import { bytesToHex, bytesToUtf8 } from './bytes.js';
import { invalid } from './errors.js';
import { findSyscalls, MalformedScriptError, type PushedValue, pushedInteger } from './script.js';
import type {
  NeoAssetRegistration,
  NeoBlockTransaction,
  NeoContractDeployment,
  NeoDeploymentKind,
} from './types.js';
import { address, fixed8, hash160, hex, isRecord, record, text, uint } from './validate.js';

/** The fields of a deployment that come from the transaction itself. */
export type DeployedContract = Pick<
  NeoContractDeployment,
  'hash' | 'kind' | 'name' | 'author' | 'version' | 'email' | 'description' | 'needsStorage'
>;

/** What a RegisterTransaction carries (see `NeoAssetRegistration.register`). */
export type RegisteredAsset = NonNullable<NeoAssetRegistration['register']>;

/** Where the transaction sits. */
export interface DeploymentContext {
  blockNumber: number;
  time: number;
}

const CREATE_NAMES = new Map<string, NeoDeploymentKind>([
  ['Neo.Contract.Create', 'Contract.Create'],
  ['AntShares.Contract.Create', 'Contract.Create'],
  ['Neo.Contract.Migrate', 'Contract.Migrate'],
  ['AntShares.Contract.Migrate', 'Contract.Migrate'],
]);
const ASSET_CREATE_NAMES = new Set(['Neo.Asset.Create', 'AntShares.Asset.Create']);
/** ContractPropertyState.HasStorage; older nodes took a `need_storage` boolean in the same place. */
const HAS_STORAGE = 1n;

/**
 * The `contract` of a verbose PublishTransaction, validated. Its `code.hash` must be the
 * hash160 of `code.script` when the script is there.
 */
export function parsePublishedContract(raw: unknown, path: string): DeployedContract {
  const contract = record(raw, path);
  const code = record(contract.code, `${path}.code`);
  const hash = hash160(code.hash, `${path}.code.hash`);
  if (code.script !== undefined) {
    const script = hex(code.script, `${path}.code.script`);
    if (contractHashOfScript(script) !== hash)
      throw invalid(`${path}.code.hash is not the hash of its script`);
  }
  const needsStorage = contract.needstorage ?? contract.storage ?? false;
  if (typeof needsStorage !== 'boolean') throw invalid(`${path}.needstorage is not a boolean`);
  return {
    hash,
    kind: 'PublishTransaction',
    name: text(contract.name ?? '', `${path}.name`),
    author: text(contract.author ?? '', `${path}.author`),
    version: text(contract.version ?? contract.code_version ?? '', `${path}.version`),
    email: text(contract.email ?? '', `${path}.email`),
    description: text(contract.description ?? '', `${path}.description`),
    needsStorage,
  };
}

/** The `asset` of a verbose RegisterTransaction, validated. */
export function parseRegisteredAsset(raw: unknown, path: string): RegisteredAsset {
  const asset = record(raw, path);
  const amount = fixed8(asset.amount, `${path}.amount`, true);
  return {
    type: text(asset.type, `${path}.type`),
    name: englishName(asset.name, `${path}.name`),
    // `-0.00000001` (minus one unit) is NEO's "no limit".
    amount: amount < 0n ? null : amount,
    precision: uint(asset.precision, `${path}.precision`, 8),
    admin: address(asset.admin, `${path}.admin`),
  };
}

/**
 * The English name among an asset's names: NEO writes them as `[{lang, name}, ...]`, as a
 * plain string, or null. The English one, else the first, else `""`.
 */
export function englishName(raw: unknown, path: string): string {
  const names = assetNames(raw, path);
  return (names.find((entry) => entry.lang === 'en') ?? names[0])?.name ?? '';
}

/** Every (lang, name) pair of an asset name field; a plain string is one pair with lang `""`. */
export function assetNames(raw: unknown, path: string): { lang: string; name: string }[] {
  if (raw === null || raw === undefined) return [];
  // Whoever registers an asset chooses its names: capped and cleaned like a token's.
  if (typeof raw === 'string') return [{ lang: '', name: cleanTokenText(raw, MAX_TOKEN_NAME_CHARS) }];
  if (!Array.isArray(raw)) throw invalid(`${path} is neither a list of names nor a string`);
  return raw.map((entry, i) => {
    if (!isRecord(entry)) throw invalid(`${path}[${i}] is not an object`);
    return {
      lang: text(entry.lang, `${path}[${i}].lang`),
      name: cleanTokenText(text(entry.name, `${path}[${i}].name`), MAX_TOKEN_NAME_CHARS),
    };
  });
}

/** What an invocation script deploys, read from its literal pushes. */
export interface ScriptDeployments {
  contracts: DeployedContract[];
  /** Deployment calls whose arguments are computed at run time: they cannot be read here. */
  unreadable: number;
  /** True when the script calls `Asset.Create` (the asset id is the transaction id). */
  createsAsset: boolean;
}

/** Contracts deployed (`Contract.Create` / `Contract.Migrate`) and assets created by an invocation script. */
export function scanInvocationScript(scriptHex: string): ScriptDeployments {
  const found: ScriptDeployments = { contracts: [], unreadable: 0, createsAsset: false };
  let sites: ReturnType<typeof findSyscalls>;
  try {
    sites = findSyscalls(Buffer.from(scriptHex, 'hex'));
  } catch (error) {
    // The VM faults on such a script before or at the bad operand; whatever it would have
    // deployed before that is not guessed here.
    if (error instanceof MalformedScriptError) return { ...found, unreadable: 1 };
    throw error;
  }
  for (const site of sites) {
    if (ASSET_CREATE_NAMES.has(site.name)) found.createsAsset = true;
    const kind = CREATE_NAMES.get(site.name);
    if (kind === undefined) continue;
    // Popped in this order: script, parameter list, return type, properties (or need_storage),
    // name, version, author, email, description. The top of the stack is the last item.
    const args = site.stack.slice(-9).reverse();
    const bytes = args.map(bytesOf);
    if (args.length < 9 || bytes.some((b) => b === undefined)) {
      found.unreadable++;
      continue;
    }
    const [script, , , , name, version, author, email, description] = bytes as Uint8Array[];
    const properties = pushedInteger(args[3]) ?? 0n;
    found.contracts.push({
      hash: contractHashOfScript(bytesToHex(script!)),
      kind,
      name: bytesToUtf8(name!),
      author: bytesToUtf8(author!),
      version: bytesToUtf8(version!),
      email: bytesToUtf8(email!),
      description: bytesToUtf8(description!),
      needsStorage: (properties & HAS_STORAGE) !== 0n,
    });
  }
  return found;
}

/** Extra data of a verbose transaction that deployments need (from the block parser). */
export interface DeploymentSource {
  tx: NeoBlockTransaction;
  publish: DeployedContract | null;
  register: RegisteredAsset | null;
}

/**
 * Deployments and registrations of one transaction of a block. Invocations that FAULTed
 * deploy nothing. `warnings` names deployments that could not be read.
 */
export function decodeDeployments(
  source: DeploymentSource,
  context: DeploymentContext,
): { deployments: NeoContractDeployment[]; registrations: NeoAssetRegistration[]; warnings: string[] } {
  const { tx } = source;
  const deployments: NeoContractDeployment[] = [];
  const registrations: NeoAssetRegistration[] = [];
  const warnings: string[] = [];
  const place = { blockNumber: context.blockNumber, time: context.time, txHash: tx.txid, txIndex: tx.index };
  if (source.publish !== null) {
    deployments.push({ ...source.publish, ...place, ownerAddress: tx.firstWitnessAddress });
  }
  if (source.register !== null) {
    registrations.push({
      assetId: tx.txid,
      kind: 'RegisterTransaction',
      ...place,
      registrarAddress: tx.firstWitnessAddress,
      register: source.register,
    });
  }
  if (tx.type === 'InvocationTransaction' && tx.script !== null && tx.faulted === false) {
    const found = scanInvocationScript(tx.script);
    const seen = new Set<string>();
    for (const contract of found.contracts) {
      if (seen.has(contract.hash)) continue;
      seen.add(contract.hash);
      deployments.push({ ...contract, ...place, ownerAddress: tx.firstWitnessAddress });
    }
    if (found.unreadable > 0) {
      warnings.push(
        `${tx.txid}: ${found.unreadable} contract deployment(s) with arguments computed at run time`,
      );
    }
    if (found.createsAsset) {
      registrations.push({
        assetId: tx.txid,
        kind: 'Asset.Create',
        ...place,
        registrarAddress: tx.firstWitnessAddress,
        register: null,
      });
    }
  }
  return { deployments, registrations, warnings };
}

function bytesOf(value: PushedValue | undefined): Uint8Array | undefined {
  return value !== undefined && 'bytes' in value ? value.bytes : undefined;
}
