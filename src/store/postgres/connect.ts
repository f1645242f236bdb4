/**
 * Opening the PostgreSQL store's connection pool: the connection-string checks, the pool and its
 * result parsing, then the schema (migrated on a primary; on a read replica, checked against the
 * version this code writes).
 */
import pg from 'pg';
import { redactUrls, UserError } from '../../internal/errors.js';
import type { Logger } from '../../internal/logger.js';
import { MissingStoreError } from '../missing-store.js';
import { MIGRATIONS, MIGRATIONS_TABLE, migrate } from './migrations.js';

export interface PostgresStoreOptions {
  /**
   * `postgres://` (or `postgresql://`) connection string, as node-postgres reads it; an
   * `options=-c search_path=...` parameter puts the store in its own schema.
   */
  url: string;
  logger: Logger;
  /** Connections in this process's pool. Default 10. */
  maxConnections?: number;
  /**
   * A read replica (`serve --db-read`): no migrations (a hot standby refuses writes; the primary
   * migrates and the replica replays it), and every session is read-only, so a write by mistake
   * fails instead of reaching a database that is not the primary. Default false.
   */
  readOnly?: boolean;
  /** Refuse (UserError) a database (schema) without tokenquery's tables instead of creating them. */
  mustExist?: boolean;
  /** Called when this open created tokenquery's tables. */
  onCreate?: () => void;
  /**
   * A batch writes the rows of a table with binary `COPY` when it has at least this many for it
   * (bulk-copy.ts); below, with one `INSERT … SELECT FROM unnest(…)`. Default 1,000. Tests set 0
   * (always COPY) or `Infinity` (never) to compare the two.
   */
  copyFromRows?: number;
}

const INT8_OID = 20;
const BYTEA_OID = 17;

/**
 * Result parsing for this store's pools (not pg's global defaults, which other code may rely on):
 * `bigint` columns become numbers (block numbers, counts and times stay far below 2^53), and
 * `bytea` stays in its `\x…` text form, which codec.ts decodes without building a Buffer.
 * `numeric` already arrives as exact decimal text.
 */
const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => {
    if (oid === INT8_OID) return (value: string) => Number(value);
    if (oid === BYTEA_OID) return (value: string) => value;
    return pg.types.getTypeParser(oid, format as 'text');
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/** The connection string without credentials or parameters, for messages. */
export function describePostgresUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return 'the given postgres:// URL';
  }
}

/**
 * A password holding an unescaped `/` (or `@`) ends the URL's authority early, so node-postgres
 * would take a piece of the password for the host name and show it in its error ("getaddrinfo
 * ENOTFOUND <piece>"). Such a URL has an `@` after its authority: refuse it before connecting.
 */
function refuseUnescapedPassword(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return; // node-postgres reports an unparsable URL as "Invalid URL", without any of it
  }
  if (`${parsed.pathname}${parsed.hash}`.includes('@')) {
    throw new UserError(
      'the PostgreSQL connection string is malformed: percent-encode the special characters of its password (@ / ? # as %40 %2F %3F %23)',
    );
  }
}

/**
 * Opens the pool: checks the connection, then brings the schema up to date (migrations.ts), or on a
 * read replica checks it.
 */
export async function connectPool(options: PostgresStoreOptions): Promise<pg.Pool> {
  const { url, logger } = options;
  const where = describePostgresUrl(url);
  refuseUnescapedPassword(url);
  let pool: pg.Pool;
  try {
    pool = new pg.Pool({
      connectionString: url,
      max: options.maxConnections ?? 10,
      // A server that does not answer (or a pool that stays exhausted) fails the call after
      // 10 s instead of hanging it; keep-alive notices a peer that vanished.
      connectionTimeoutMillis: 10_000,
      keepAlive: true,
      types: TYPES,
      application_name: 'tokenquery',
      // The store decodes hex output only; a server configured for `escape` output is overridden.
      onConnect: async (client) => {
        await client.query(
          options.readOnly === true
            ? "SET bytea_output = 'hex'; SET default_transaction_read_only = on"
            : "SET bytea_output = 'hex'",
        );
      },
    });
  } catch (error) {
    throw new UserError(`cannot use the PostgreSQL connection string for ${where}`, {
      cause: error,
      details: error instanceof Error ? error.message : String(error),
    });
  }
  // An idle connection that breaks (server restart) must not crash the process: the pool drops
  // it and the next query opens a new one.
  pool.on('error', (error) => {
    logger.warn({ err: redactUrls(error.message) }, 'idle PostgreSQL connection failed');
  });

  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    await pool.end().catch(() => {});
    const message = error instanceof Error ? error.message : String(error);
    throw new UserError(`cannot connect to PostgreSQL at ${where}: ${message}`, { cause: error });
  }
  try {
    let created = false;
    if (options.readOnly === true) await checkReplicaSchema(client, where);
    else {
      const exists = await hasStore(client);
      if (!exists && options.mustExist === true) throw new MissingStoreError(where);
      await migrate(client, logger);
      created = !exists;
    }
    client.release();
    if (created) options.onCreate?.();
  } catch (error) {
    client.release(error instanceof Error ? error : true);
    await pool.end().catch(() => {});
    throw error;
  }
  return pool;
}

/** Whether the store's schema (the first of `search_path`) holds tokenquery's tables. */
async function hasStore(client: pg.PoolClient): Promise<boolean> {
  const exists = await client.query<{ table: string | null }>('SELECT to_regclass($1) AS "table"', [
    MIGRATIONS_TABLE,
  ]);
  return exists.rows[0]?.table != null;
}

/**
 * A replica must hold the schema this version writes: it replays the primary's migrations, which
 * the primary applies when the first process opens it. A replica that lags is waited for (up to
 * 30 s); one that is behind for longer, or ahead, is refused with a clear message.
 */
async function checkReplicaSchema(client: pg.PoolClient, where: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const exists = await client.query<{ table: string | null }>('SELECT to_regclass($1) AS "table"', [
      MIGRATIONS_TABLE,
    ]);
    const version =
      exists.rows[0]?.table == null
        ? 0
        : ((
            await client.query<{ version: number | null }>(
              `SELECT max(version) AS version FROM ${MIGRATIONS_TABLE}`,
            )
          ).rows[0]?.version ?? 0);
    if (version === MIGRATIONS.length) return;
    if (version > MIGRATIONS.length) {
      throw new UserError(
        `the read replica at ${where} has a newer schema (version ${version}) than this tokenquery understands (${MIGRATIONS.length}); upgrade tokenquery`,
      );
    }
    if (Date.now() > deadline) {
      throw new UserError(
        `the read replica at ${where} has schema version ${version}, this tokenquery needs ${MIGRATIONS.length}: is it a replica of the --db database, and has a process opened that one since the upgrade?`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
