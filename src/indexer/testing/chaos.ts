/**
 * Shared machinery of the reliability ("chaos") scenarios: how big they are (short in CI, long
 * under `npm run chaos`), seeded randomness, their reports, waiting, and the store backends they
 * run on. Beside it: live traffic on an anvil chain (`live-traffic.ts`), and the two checks every
 * scenario ends with:
 *
 * - `snapshotStore` + `diffSnapshots` (`store-snapshots.ts`): one store equals another (a clean
 *   run) token by token, transfer by transfer and balance by balance, read through the `Store`
 *   interface only, so the same comparison works for every backend;
 * - `diffStoreAgainstNode` (`evm-truth.ts`): a store equals the node's own truth — its Transfer
 *   logs decoded here independently of the indexer, and its `balanceOf` / `totalSupply` state
 *   (and `diffApiAgainstNode` in `api-view.ts`: so does what the API answers).
 *
 * Hooks for other backends and chains: `chaosBackends()` names the store backends a scenario runs
 * on (SQLite by default; `TOKENQUERY_CHAOS_BACKENDS=sqlite,postgres` with
 * `TOKENQUERY_CHAOS_POSTGRES_URL` adds PostgreSQL: each run gets a database of its own), and
 * snapshots take the chain name, so a NEO harness can feed the same comparisons.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getBlock } from '../../devchain/chain.js';
import type { Logger } from '../../internal/logger.js';
import { openStore } from '../../store/open.js';
import type { Store } from '../../store/types.js';

// ---- size and seed ----

/** True under `npm run chaos` (`TOKENQUERY_CHAOS=1`): scenarios run their long versions. */
export const CHAOS = process.env.TOKENQUERY_CHAOS === '1';

/** `ci` in the ordinary test run, `long` under `npm run chaos`. */
export function scaled<T>(ci: T, long: T): T {
  return CHAOS ? long : ci;
}

/**
 * The scenario's seed: `TOKENQUERY_CHAOS_SEED` when set (to replay a run), else a fresh one.
 * Always printed, so that any failure can be replayed.
 */
export function chaosSeed(scenario: string): number {
  const fixed = process.env.TOKENQUERY_CHAOS_SEED;
  const seed = fixed !== undefined && fixed !== '' ? Number(fixed) >>> 0 : (Math.random() * 2 ** 32) >>> 0;
  console.log(`# ${scenario}: seed ${seed} (replay with TOKENQUERY_CHAOS_SEED=${seed})`);
  return seed;
}

/**
 * Records a scenario's figures for `npm run chaos`, which writes them into docs/reliability.md
 * (`TOKENQUERY_CHAOS_REPORT` names the directory; without it nothing is written). Also printed.
 */
export function recordResult(scenario: string, figures: Record<string, unknown>): void {
  const line = JSON.stringify({ scenario, long: CHAOS, ...figures });
  console.log(`# result ${line}`);
  const dir = process.env.TOKENQUERY_CHAOS_REPORT;
  if (dir === undefined || dir === '') return;
  mkdirSync(dir, { recursive: true });
  const suffix = typeof figures.backend === 'string' ? `-${figures.backend}` : '';
  writeFileSync(join(dir, `${scenario}${suffix}.json`), `${line}\n`);
}

// ---- backends ----

/** eth's checkpoint is at `head`, on the node's chain (the same block hash), and every supply is read. */
export async function caughtUp(store: Store, nodeUrl: string, head: number): Promise<boolean> {
  const checkpoint = await store.writer.getCheckpoint('eth');
  if (checkpoint?.block !== head) return false;
  const [ref] = await store.writer.getBlockRefs('eth', head, head);
  if (ref?.hash !== (await getBlock(nodeUrl, head))?.hash) return false;
  return (await store.writer.tokensNeedingSupply('eth', -1, 1)).length === 0;
}

/** A store backend the scenarios can run on. */
export interface ChaosBackend {
  name: string;
  /** A location (`--db` value) no run has used yet. */
  freshLocation(label: string): Promise<string>;
  /** Drops what `freshLocation` created. */
  cleanup(): Promise<void>;
}

/** SQLite files in `dir`. */
export function sqliteBackend(dir: string): ChaosBackend {
  let n = 0;
  return {
    name: 'sqlite',
    freshLocation: async (label) => join(dir, `${label}-${n++}.sqlite`),
    cleanup: async () => {},
  };
}

/**
 * PostgreSQL: one fresh database per location on the server of `TOKENQUERY_CHAOS_POSTGRES_URL`
 * (e.g. `postgres://postgres@127.0.0.1:5432/postgres`), dropped by `cleanup`.
 */
export function postgresBackend(adminUrl: string): ChaosBackend {
  const created: string[] = [];
  const admin = async <T>(work: (client: import('pg').Client) => Promise<T>): Promise<T> => {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  return {
    name: 'postgres',
    async freshLocation(label) {
      const name = `tq_chaos_${label.replace(/\W/g, '_')}_${process.pid}_${created.length}`;
      await admin((c) => c.query(`CREATE DATABASE ${name}`));
      created.push(name);
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      return url.toString();
    },
    async cleanup() {
      for (const name of created.splice(0))
        await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => {});
    },
  };
}

/**
 * The backends to run on: `TOKENQUERY_CHAOS_BACKENDS` (comma-separated; default `sqlite`).
 * `postgres` needs `TOKENQUERY_CHAOS_POSTGRES_URL`.
 */
export function chaosBackends(dir: string): ChaosBackend[] {
  const names = (process.env.TOKENQUERY_CHAOS_BACKENDS ?? 'sqlite').split(',').map((s) => s.trim());
  return names.filter(Boolean).map((name) => {
    if (name === 'sqlite') return sqliteBackend(dir);
    if (name === 'postgres') {
      const url = process.env.TOKENQUERY_CHAOS_POSTGRES_URL;
      if (!url)
        throw new Error(
          'TOKENQUERY_CHAOS_BACKENDS names postgres but TOKENQUERY_CHAOS_POSTGRES_URL is unset',
        );
      return postgresBackend(url);
    }
    throw new Error(`unknown chaos backend "${name}"`);
  });
}

/** Opens a store at a backend location (read side: no writer thread). */
export function openAt(location: string, logger: Logger): Promise<Store> {
  return openStore({ location, logger });
}

// ---- processes ----

/** Resident set size of a process in bytes (Linux `/proc`); undefined elsewhere or once it is gone. */
export function rssOf(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}
