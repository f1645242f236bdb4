/**
 * The NEO (Legacy 2.x) part of the PostgreSQL store: the UTXO output table, contract
 * deployments and asset facts (migration `0002_neo`), and the reads the NEO operations need.
 * Same semantics as the SQLite store's neo-tables.ts, which the contract suite checks: global
 * assets are ordinary rows of `tokens`, and `planBatch` (src/store/batch-plan.ts, shared with SQLite) turns a batch's
 * outputs into balance deltas before `applyBatch` applies them with everything else.
 */
import type pg from 'pg';
import { NON_HOLDERS } from '../batch-plan.js';
import { type NeoTokenColumns, withNeoFields } from '../rows.js';
import type {
  AddressBalance,
  NeoBatchPart,
  NeoContractRecord,
  NeoOutputRow,
  NeoTokenPage,
  NeoTokenRecord,
} from '../types.js';
import { byteaArray, int4Array, int8Array, numericArray } from './binary-arrays.js';
import {
  decodeAmount,
  decodeHex,
  decodeText,
  encodeHex,
  encodeHexDigits,
  encodeText,
  type HoldingColumns,
  type TokenRow,
  toHolding,
  toTokenRecord,
} from './codec.js';

/** The `0002_neo` migration of the PostgreSQL store. */
export const NEO_MIGRATION_SQL = `
  CREATE TABLE neo_outputs (
    chain text COLLATE "C" NOT NULL,
    txid bytea NOT NULL,
    n integer NOT NULL,
    asset bytea NOT NULL,
    address text NOT NULL,
    value numeric NOT NULL,
    PRIMARY KEY (chain, txid, n)
  );

  CREATE TABLE neo_contracts (
    chain text COLLATE "C" NOT NULL,
    hash bytea NOT NULL,
    block_number bigint NOT NULL,
    tx_index integer NOT NULL,
    seq integer NOT NULL,
    tx_hash bytea NOT NULL,
    time bigint NOT NULL,
    kind text NOT NULL,
    name bytea NOT NULL,
    author bytea NOT NULL,
    owner text,
    PRIMARY KEY (chain, hash)
  );
  CREATE INDEX neo_contracts_newest ON neo_contracts (chain, block_number DESC, tx_index DESC, seq DESC);

  CREATE TABLE neo_assets (
    chain text COLLATE "C" NOT NULL,
    asset bytea NOT NULL,
    type text,
    registered_block bigint,
    registered_time bigint,
    registrar text,
    PRIMARY KEY (chain, asset)
  );
`;

type Runner = <R extends pg.QueryResultRow>(
  name: NeoStatement,
  values: unknown[],
) => Promise<pg.QueryResult<R>>;

const NEO_TOKEN_COLUMNS = `
  t.address, t.name, t.symbol, t.decimals, t.total_supply, t.cap, t.burned_balance,
    t.holder_count, t.transfer_count, t.first_block, t.icon,
    a.type AS asset_type, a.registered_time, a.registrar,
    c.time AS contract_time, c.owner AS contract_owner`;
/** The NEO fields of the `tokens` row aliased `t`. */
const NEO_TOKEN_JOINS = `
  LEFT JOIN neo_assets AS a ON a.chain = t.chain AND a.asset = t.address
  LEFT JOIN neo_contracts AS c ON c.chain = t.chain AND c.hash = t.address`;
const NEO_TOKEN_SELECT = `SELECT ${NEO_TOKEN_COLUMNS} FROM tokens AS t ${NEO_TOKEN_JOINS}`;

/** The NEO statements, run as named prepared statements like the store's own. */
export const NEO_SQL = {
  neoInsertOutputs: `
    INSERT INTO neo_outputs (chain, txid, n, asset, address, value)
    SELECT $1, * FROM unnest($2::bytea[], $3::integer[], $4::bytea[], $5::text[], $6::numeric[])`,
  neoDeleteOutputs: `
    DELETE FROM neo_outputs AS o USING unnest($2::bytea[], $3::integer[]) AS s(txid, n)
    WHERE o.chain = $1 AND o.txid = s.txid AND o.n = s.n`,
  // The first deployment of a hash wins, across batches and inside one.
  neoInsertContracts: `
    INSERT INTO neo_contracts (chain, hash, block_number, tx_index, seq, tx_hash, time, kind, name, author, owner)
    SELECT $1, * FROM unnest($2::bytea[], $3::bigint[], $4::integer[], $5::integer[], $6::bytea[], $7::bigint[],
      $8::text[], $9::bytea[], $10::bytea[], $11::text[])
    ON CONFLICT (chain, hash) DO NOTHING`,
  // A later type replaces an earlier one; the first registration stays.
  neoUpsertAssets: `
    INSERT INTO neo_assets AS a (chain, asset, type, registered_block, registered_time, registrar)
    SELECT $1, * FROM unnest($2::bytea[], $3::text[], $4::bigint[], $5::bigint[], $6::text[])
    ON CONFLICT (chain, asset) DO UPDATE SET
      type = coalesce(excluded.type, a.type),
      registered_block = coalesce(a.registered_block, excluded.registered_block),
      registered_time = CASE WHEN a.registered_block IS NULL THEN excluded.registered_time ELSE a.registered_time END,
      registrar = CASE WHEN a.registered_block IS NULL THEN excluded.registrar ELSE a.registrar END`,
  neoHasData: `
    SELECT EXISTS (SELECT 1 FROM neo_outputs WHERE chain = $1)
      OR EXISTS (SELECT 1 FROM neo_contracts WHERE chain = $1)
      OR EXISTS (SELECT 1 FROM neo_assets WHERE chain = $1) AS has`,
  neoGetOutputs: `
    SELECT r.ord, o.asset, o.address, o.value
    FROM unnest($2::bytea[], $3::integer[]) WITH ORDINALITY AS r(txid, n, ord)
    JOIN neo_outputs AS o ON o.chain = $1 AND o.txid = r.txid AND o.n = r.n
    ORDER BY r.ord`,
  neoGetToken: `${NEO_TOKEN_SELECT} WHERE t.chain = $1 AND t.address = $2`,
  neoListTokens: `
    SELECT (SELECT token_count FROM chains WHERE chain = $1) AS total, p.*
    FROM (VALUES (1)) AS one
    LEFT JOIN LATERAL (
      ${NEO_TOKEN_SELECT} WHERE t.chain = $1
      ORDER BY t.holder_count DESC, t.transfer_count DESC, t.address ASC LIMIT $2 OFFSET $3
    ) AS p ON true`,
  // listAddressBalances (statements.ts) with the NEO fields.
  neoListAddressBalances: `
    SELECT ${NEO_TOKEN_COLUMNS}, b.amount AS holding_amount, b.transfer_count AS holding_transfers
    FROM balances AS b JOIN tokens AS t ON t.id = b.token_id ${NEO_TOKEN_JOINS}
    WHERE b.holder = $2 AND b.amount > 0 AND t.chain = $1
    ORDER BY t.holder_count DESC, t.transfer_count DESC, t.address ASC`,
  neoListContracts: `
    SELECT hash, block_number, tx_index, tx_hash, time, kind, name, author, owner FROM neo_contracts
    WHERE chain = $1 ORDER BY block_number DESC, tx_index DESC, seq DESC LIMIT $2 OFFSET $3`,
} as const;

export type NeoStatement = keyof typeof NEO_SQL;

type NeoTokenRow = TokenRow & NeoTokenColumns;

function toNeoToken(chain: string, row: NeoTokenRow): NeoTokenRecord {
  return withNeoFields(toTokenRecord(chain, row), row);
}

/** Writes the output table, deployments and asset facts of a batch, inside its transaction. */
export async function writeNeoPart(run: Runner, chain: string, neo: NeoBatchPart): Promise<void> {
  // Created first: an output created and spent inside the batch comes and goes.
  if (neo.outputsCreated.length > 0) {
    const outputs = neo.outputsCreated;
    await run('neoInsertOutputs', [
      chain,
      byteaArray(outputs.map((o) => encodeHexDigits(o.txid))),
      int4Array(outputs.map((o) => o.n)),
      byteaArray(outputs.map((o) => encodeHexDigits(o.asset))),
      outputs.map((o) => o.address),
      numericArray(outputs.map((o) => o.value)),
    ]);
  }
  if (neo.outputsSpent.length > 0) {
    // An output created before the index began was never in the table: nothing to delete.
    await run('neoDeleteOutputs', [
      chain,
      byteaArray(neo.outputsSpent.map((o) => encodeHexDigits(o.txid))),
      int4Array(neo.outputsSpent.map((o) => o.n)),
    ]);
  }
  if (neo.deployments.length > 0) {
    // `seq` orders deployments of one transaction; one statement cannot insert a key twice, so
    // later deployments of a hash inside the batch are dropped here (the first one wins).
    const seen = new Set<string>();
    const rows: (NeoContractRecord & { seq: number })[] = [];
    neo.deployments.forEach((d, seq) => {
      const key = encodeHexDigits(d.hash);
      if (seen.has(key)) return;
      seen.add(key);
      rows.push({ ...d, seq });
    });
    await run('neoInsertContracts', [
      chain,
      byteaArray(rows.map((d) => encodeHexDigits(d.hash))),
      int8Array(rows.map((d) => d.blockNumber)),
      int4Array(rows.map((d) => d.txIndex)),
      int4Array(rows.map((d) => d.seq)),
      byteaArray(rows.map((d) => encodeHexDigits(d.txHash))),
      int8Array(rows.map((d) => d.time)),
      rows.map((d) => d.kind),
      byteaArray(rows.map((d) => encodeText(d.name).slice(2))),
      byteaArray(rows.map((d) => encodeText(d.author).slice(2))),
      rows.map((d) => d.ownerAddress),
    ]);
  }
  if (neo.assets.length > 0) {
    // Facts of one asset inside the batch, merged as if applied one after another.
    const merged = new Map<string, (typeof neo.assets)[number]>();
    for (const asset of neo.assets) {
      const key = encodeHexDigits(asset.asset);
      const seen = merged.get(key);
      merged.set(
        key,
        seen === undefined
          ? asset
          : {
              asset: asset.asset,
              type: asset.type ?? seen.type,
              registration: seen.registration ?? asset.registration,
            },
      );
    }
    const assets = [...merged.values()];
    await run('neoUpsertAssets', [
      chain,
      byteaArray(assets.map((a) => encodeHexDigits(a.asset))),
      assets.map((a) => a.type),
      int8Array(assets.map((a) => a.registration?.blockNumber ?? null)),
      int8Array(assets.map((a) => a.registration?.time ?? null)),
      assets.map((a) => a.registration?.registrar ?? null),
    ]);
  }
}

/** True when the chain holds NEO data (which cannot be rolled back). */
export async function hasNeoData(run: Runner, chain: string): Promise<boolean> {
  return (await run<{ has: boolean }>('neoHasData', [chain])).rows[0]?.has === true;
}

export async function getNeoOutputs(
  run: Runner,
  chain: string,
  refs: readonly { txid: string; n: number }[],
): Promise<NeoOutputRow[]> {
  if (refs.length === 0) return [];
  const result = await run<{ ord: number; asset: string; address: string; value: string }>('neoGetOutputs', [
    chain,
    byteaArray(refs.map((r) => encodeHexDigits(r.txid))),
    int4Array(refs.map((r) => r.n)),
  ]);
  return result.rows.map((row) => {
    const ref = refs[row.ord - 1]!;
    return {
      txid: ref.txid,
      n: ref.n,
      asset: decodeHex(row.asset),
      address: row.address,
      value: decodeAmount(row.value),
    };
  });
}

export async function getNeoToken(
  run: Runner,
  chain: string,
  address: string,
): Promise<NeoTokenRecord | null> {
  const row = (await run<NeoTokenRow>('neoGetToken', [chain, encodeHex(address)])).rows[0];
  return row === undefined ? null : toNeoToken(chain, row);
}

export async function listNeoTokens(
  run: Runner,
  chain: string,
  offset: number,
  limit: number,
): Promise<NeoTokenPage> {
  const result = await run<NeoTokenRow & { total: number | null }>('neoListTokens', [chain, limit, offset]);
  const tokens: NeoTokenRecord[] = [];
  for (const row of result.rows) if (row.address !== null) tokens.push(toNeoToken(chain, row));
  return { total: result.rows[0]?.total ?? 0, tokens };
}

/** The NEO tokens `address` holds (see `NeoReader.listNeoAddressBalances`). */
export async function listNeoAddressBalances(
  run: Runner,
  chain: string,
  address: string,
): Promise<AddressBalance<NeoTokenRecord>[]> {
  if (NON_HOLDERS.has(address)) return [];
  const result = await run<NeoTokenRow & HoldingColumns>('neoListAddressBalances', [
    chain,
    encodeHex(address),
  ]);
  return result.rows.map((row) => ({ token: toNeoToken(chain, row), ...toHolding(row) }));
}

export async function listNeoContracts(
  run: Runner,
  chain: string,
  offset: number,
  limit: number,
): Promise<NeoContractRecord[]> {
  const result = await run<{
    hash: string;
    block_number: number;
    tx_index: number;
    tx_hash: string;
    time: number;
    kind: string;
    name: string;
    author: string;
    owner: string | null;
  }>('neoListContracts', [chain, limit, offset]);
  return result.rows.map((row) => ({
    hash: decodeHex(row.hash),
    blockNumber: row.block_number,
    txIndex: row.tx_index,
    txHash: decodeHex(row.tx_hash),
    time: row.time,
    kind: row.kind,
    name: decodeText(row.name),
    author: decodeText(row.author),
    ownerAddress: row.owner,
  }));
}
