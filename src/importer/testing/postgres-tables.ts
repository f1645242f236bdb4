/**
 * A PostgreSQL store's tables and catalog as comparable lines: how the import tests tell that two
 * PostgreSQL stores, filled in different ways (row by row, through COPY, as a bulk load), hold the
 * same rows and the same partitions, indexes and constraints.
 */
import { querySql } from '../../store/postgres/testing/test-database.js';

/**
 * Every table of the store as one fingerprint line each (row count and the md5 of its rows' JSON,
 * in order): two stores with equal lines hold the same rows. Token ids are replaced by the token's
 * address: they come from a sequence, which a failed batch advances too. `chains.updated_at` is a
 * clock.
 */
export async function dumpTables(url: string): Promise<string[]> {
  const byToken = (table: string) =>
    `SELECT (to_jsonb(t) - 'token_id') || jsonb_build_object('token', k.address) AS r FROM ${table} AS t JOIN tokens AS k ON k.id = t.token_id`;
  const tables: [string, string][] = [
    ['chains', "SELECT to_jsonb(t) - 'updated_at' AS r FROM chains AS t"],
    ['tokens', "SELECT to_jsonb(t) - 'id' AS r FROM tokens AS t"],
    ['transfers', byToken('transfers')],
    ['address_transfers', byToken('address_transfers')],
    ['balances', byToken('balances')],
    ['balance_changes', byToken('balance_changes')],
    ['block_refs', 'SELECT to_jsonb(t) AS r FROM block_refs AS t'],
    ['recent_block_tokens', byToken('recent_block_tokens')],
    ['seed_balances', byToken('seed_balances')],
    ['bulk_transfers', byToken('bulk_transfers')],
  ];
  const out: string[] = [];
  for (const [name, select] of tables) {
    const [row] = await querySql<{ n: string; hash: string | null }>(
      url,
      `SELECT count(*) AS n, md5(string_agg(r::text, E'\\n' ORDER BY r::text)) AS hash FROM (${select}) AS d`,
    );
    out.push(`${name}: ${row!.n} rows, ${row!.hash}`);
  }
  return out;
}

/**
 * The tables, partitions, indexes (with the parent index each is attached to) and constraints of
 * the store's schema, by name and definition, the schema's name left out: what a bulk load's swap
 * of partitions must leave exactly as a row-by-row load does.
 */
export async function dumpCatalog(url: string): Promise<string[]> {
  const rows = await querySql<{ line: string }>(
    url,
    `WITH s AS (SELECT current_schema() AS name)
     SELECT format('table %s %s %s %s', c.relname, c.relkind, coalesce(pg_get_expr(c.relpartbound, c.oid), ''),
       coalesce(array_to_string(c.reloptions, ','), '')) AS line
     FROM pg_class AS c, s WHERE c.relnamespace = s.name::regnamespace AND c.relkind IN ('r', 'p')
     UNION ALL
     SELECT format('index %s %s parent %s', c.relname, replace(pg_get_indexdef(c.oid), s.name || '.', ''),
       coalesce((SELECT p.relname FROM pg_inherits AS i JOIN pg_class AS p ON p.oid = i.inhparent WHERE i.inhrelid = c.oid), '-'))
     FROM pg_class AS c, s WHERE c.relnamespace = s.name::regnamespace AND c.relkind IN ('i', 'I')
     UNION ALL
     SELECT format('constraint %s on %s: %s', k.conname, k.conrelid::regclass, pg_get_constraintdef(k.oid))
     FROM pg_constraint AS k, s WHERE k.connamespace = s.name::regnamespace
     ORDER BY 1`,
  );
  return rows.map((row) => row.line);
}
