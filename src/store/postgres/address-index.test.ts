/**
 * What only the PostgreSQL store has for the address operations and token holders: the in-place
 * upgrade of a store made by the previous schema version (migration `0007_address_index`), and
 * the plans of the address and holder statements (index ranges, no sort of an address's or a
 * token's whole history). The semantics are the contract suite's (postgres-store.test.ts).
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import pino from 'pino';
import { DEAD_ADDRESS, ZERO_ADDRESS } from '../../internal/chains.js';
import { silentLogger } from '../../internal/logger.js';
import { seededRandom } from '../../internal/random.js';
import {
  A1,
  A2,
  A3,
  assetTransfer,
  GAS,
  GAS_META,
  genesis,
  NEO,
  neoBatch,
  nep5Transfer,
  RPX,
} from '../contract/neo.js';
import { AddressModel } from '../testing/address-model.js';
import { assertAddressViews } from '../testing/address-model-check.js';
import {
  batch,
  blockHash,
  holder,
  seeded,
  tokenAddress,
  tokenMetadata,
  transferRecord,
} from '../testing/batches.js';
import type { IndexBatch, Store, TransferRecord } from '../types.js';
import { upgradeAddressIndexInChunks } from './address-migration.js';
import { encodeHex } from './codec.js';
import { MIGRATIONS, migrate } from './migrations.js';
import { openPostgresStore } from './postgres-store.js';
import { SQL, type StatementName } from './statements.js';
import { advanceSequences, copyRows } from './testing/previous-version.js';
import { createTestDatabase, querySql, type TestDatabase, withSchema } from './testing/test-database.js';

const PREVIOUS_VERSION = MIGRATIONS.findIndex((m) => m.name === '0007_address_index');

/** A random EVM history of `steps` batches and rollbacks on `chain`, fed to every store and the model. */
async function randomHistory(
  stores: readonly Store[],
  model: AddressModel,
  chain: string,
  seed: number,
  steps: number,
): Promise<void> {
  const next = seededRandom(seed);
  const int = (n: number): number => Math.floor(next() * n);
  const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;
  const tokens = Array.from({ length: 5 }, (_, i) => tokenAddress(i + 1));
  const parties = [ZERO_ADDRESS, DEAD_ADDRESS, ...Array.from({ length: 20 }, (_, i) => holder(i + 1))];
  let checkpoint = 0;
  for (let step = 0; step < steps; step++) {
    if (checkpoint > 3 && next() < 0.2) {
      const toBlock = checkpoint - 1 - int(3);
      for (const store of stores) await store.writer.rollback(chain, toBlock, blockHash(toBlock));
      model.rollback(chain, toBlock);
      checkpoint = toBlock;
      continue;
    }
    const from = checkpoint + 1;
    const to = from + int(3);
    const transfers: TransferRecord[] = [];
    for (let block = from; block <= to; block++) {
      for (let log = 0; log < int(8); log++) {
        const sender = next() < 0.3 ? ZERO_ADDRESS : pick(parties);
        const recipient = next() < 0.1 ? sender : pick(parties);
        const value = next() < 0.1 ? 0n : next() < 0.1 ? 1n << 200n : BigInt(1 + int(9));
        transfers.push(
          transferRecord({
            token: pick(tokens),
            blockNumber: block,
            logIndex: log,
            from: sender,
            to: recipient,
            value,
          }),
        );
      }
    }
    const b = batch({ chain, from, to, transfers, prune: Math.max(0, to - 8) });
    for (const store of stores) await store.writer.applyBatch(b);
    model.apply(b);
    checkpoint = to;
  }
}

/** A late start on `chain`: the first batch seeds the holders its transfers name. */
function seededBatch(chain: string): IndexBatch {
  const token = tokenAddress(9);
  const spec = {
    chain,
    from: 101,
    to: 101,
    transfers: [
      transferRecord({ token, blockNumber: 101, logIndex: 0, from: holder(1), to: holder(2), value: 3n }),
      transferRecord({ token, blockNumber: 101, logIndex: 1, from: holder(3), to: holder(3), value: 1n }),
    ],
  };
  return seeded(spec, 100, [
    [token, holder(1), 10n],
    [token, holder(2), 0n],
    [token, holder(3), 7n],
  ]);
}

/** NEO: global assets from outputs, their transfers, and a NEP-5 transfer tied with an asset transfer. */
function neoHistory(): IndexBatch[] {
  return [
    genesis(),
    neoBatch(3, 3, {
      transfers: [nep5Transfer(RPX, 3, 0, '', A3, 5n)],
      tokens: [tokenMetadata(RPX, { name: 'Red Pulse', symbol: 'RPX', decimals: 8 }), GAS_META],
      assetTransfers: [assetTransfer(NEO, 3, 0, A1, A3, 10n), assetTransfer(GAS, 3, 1, A2, A2, 1n)],
    }),
  ];
}

const TABLES = [
  'chains',
  'tokens',
  'transfers',
  'block_refs',
  'recent_block_tokens',
  'seed_balances',
  'neo_outputs',
  'neo_contracts',
  'neo_assets',
  'api_keys',
];

describe('postgres address index', async () => {
  const database: TestDatabase = await createTestDatabase();
  after(() => database.drop());
  const open = (schema: string, logger = silentLogger()): Promise<Store> =>
    openPostgresStore({ url: withSchema(database.url, schema), logger, maxConnections: 3 });

  test('a store of the previous version is upgraded in place and answers like one built new', async () => {
    await querySql(database.url, 'CREATE SCHEMA built; CREATE SCHEMA previous');
    const built = await open('built');
    const model = new AddressModel();
    let upgraded: Store | undefined;
    try {
      await randomHistory([built], model, 'eth', 7, 16);
      const late = seededBatch('bsc');
      await built.writer.applyBatch(late);
      model.apply(late);
      for (const b of neoHistory()) {
        await built.writer.applyBatch(b);
        model.apply(b);
      }

      // The previous version's schema, holding the same data as it kept it (no zero balances).
      const client = new pg.Client({ connectionString: withSchema(database.url, 'previous') });
      await client.connect();
      try {
        await migrate(client, silentLogger(), MIGRATIONS.slice(0, PREVIOUS_VERSION));
        for (const table of TABLES) await copyRows(client, table, 'built', 'previous');
        await copyRows(client, 'balances', 'built', 'previous', 'WHERE amount <> 0');
        await advanceSequences(client, 'previous');
        // The upgrade, in chunks of a few transfers so that the progress shows.
        const lines: { percent?: number; msg: string }[] = [];
        const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
        await migrate(client, logger, [
          ...MIGRATIONS.slice(0, PREVIOUS_VERSION + 1).map((m, i) =>
            i === PREVIOUS_VERSION
              ? { ...m, fill: (c: pg.ClientBase, l: typeof logger) => upgradeAddressIndexInChunks(c, l, 10) }
              : m,
          ),
          ...MIGRATIONS.slice(PREVIOUS_VERSION + 1),
        ]);
        const percents = lines.flatMap((line) => (line.percent === undefined ? [] : [line.percent]));
        assert.ok(percents.length >= 3, `progress lines: ${JSON.stringify(lines)}`);
        assert.deepEqual(
          percents,
          [...percents].sort((a, b) => a - b),
        );
        assert.equal(percents.at(-1), 100);
      } finally {
        await client.end();
      }
      upgraded = await open('previous');

      for (const [chain, neo] of [
        ['eth', false],
        ['bsc', false],
        ['neo', true],
      ] as const) {
        await assertAddressViews(upgraded, model, chain, {
          label: `upgraded ${chain}`,
          neo,
          pageSizes: [3, 50],
        });
        await assertAddressViews(built, model, chain, { label: `built ${chain}`, neo, pageSizes: [50] });
      }
      // Both keep going alike: more batches and rollbacks after the upgrade.
      const more = new AddressModel();
      await randomHistory([built, upgraded], more, 'kcs', 8, 10);
      await assertAddressViews(upgraded, more, 'kcs', { label: 'upgraded, later batches' });
      const rows = async (schema: string) =>
        querySql(
          database.url,
          `SELECT token_id, encode(holder, 'hex') AS holder, amount::text, transfer_count FROM ${schema}.balances ORDER BY 1, 2`,
        );
      assert.deepEqual(await rows('previous'), await rows('built'));
      const listed = async (schema: string) =>
        querySql(
          database.url,
          `SELECT encode(address, 'hex') AS a, token_id, block_number, log_index, chain FROM ${schema}.address_transfers ORDER BY 1, 2, 3, 4`,
        );
      assert.deepEqual(await listed('previous'), await listed('built'));
    } finally {
      await upgraded?.close();
      await built.close();
    }
  });

  test('address and holder pages are index ranges: no sequential scan, no sort of the history', async () => {
    await querySql(database.url, 'CREATE SCHEMA plans');
    const store = await open('plans');
    try {
      const model = new AddressModel();
      await randomHistory([store], model, 'eth', 9, 6);
      const client = new pg.Client({ connectionString: withSchema(database.url, 'plans') });
      await client.connect();
      try {
        // Generic plans, as the store's prepared statements end up with; sequential scans and
        // sorts priced out, so a plan that still has one has no index-only way.
        await client.query(
          "SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off; SET enable_sort = off; SET bytea_output = 'hex'",
        );
        const token = encodeHex(tokenAddress(1));
        const address = encodeHex(holder(1));
        const inherited = await client.query<{ child: string; parent: string }>(
          `SELECT c.relname AS child, p.relname AS parent FROM pg_inherits AS i
           JOIN pg_class AS c ON c.oid = i.inhrelid JOIN pg_class AS p ON p.oid = i.inhparent
           WHERE c.relkind = 'i'`,
        );
        const parentIndex = new Map(inherited.rows.map((row) => [row.child, row.parent]));
        const cases: [StatementName, unknown[], string[]][] = [
          ['listAddressTransfers', ['eth', address, 50, 2450], ['address_transfers_newest']],
          ['listEvmAddressTransfers', ['eth', address, 50, 2450], ['address_transfers_newest']],
          ['listAddressTokenTransfers', ['eth', token, address, 50, 2450], ['address_transfers_pkey']],
          ['listHolders', ['eth', token, 50, 2450], ['balances_by_rank']],
          ['scanHoldersTied', ['eth', token, '5', address, 100], ['balances_by_rank']],
          ['scanHoldersBelow', ['eth', token, '5', 100], ['balances_by_rank']],
          ['getHolding', ['eth', token, address], ['balances_pkey']],
          ['scanHoldings', ['eth', token, address, 100], ['balances_pkey']],
          // Sorted by the tokens' ranks: the tokens the address holds, not its history.
          ['listAddressBalances', ['eth', address], ['balances_by_holder']],
        ];
        for (const [name, values, indexes] of cases) {
          await client.query(`PREPARE ${name} AS ${SQL[name]}`);
          const args = values.map((v) => (typeof v === 'number' ? String(v) : pg.escapeLiteral(String(v))));
          const explained = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
            `EXPLAIN (FORMAT JSON) EXECUTE ${name}(${args.join(', ')})`,
          );
          // A partition's index stands for its parent's (the tables are partitioned by chain).
          const nodes = flatten(explained.rows[0]!['QUERY PLAN'][0].Plan).map((n) => ({
            ...n,
            'Index Name': parentIndex.get(n['Index Name'] ?? '') ?? n['Index Name'],
          }));
          const kinds = nodes.map((n) => n['Node Type']);
          const plan = JSON.stringify(kinds);
          assert.ok(!kinds.includes('Seq Scan'), `${name} scans a table: ${plan}`);
          if (name !== 'listAddressBalances') assert.ok(!kinds.includes('Sort'), `${name} sorts: ${plan}`);
          for (const index of indexes) {
            assert.ok(
              nodes.some((n) => n['Index Name'] === index),
              `${name} does not use ${index}: ${plan}`,
            );
          }
        }
      } finally {
        await client.end();
      }
    } finally {
      await store.close();
    }
  });
});

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function flatten(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(flatten)];
}
