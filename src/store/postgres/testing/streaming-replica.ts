/**
 * A real hot standby of the PostgreSQL test server, for the read-replica and scale-out tests: a
 * second cluster on this machine, copied with `pg_basebackup -R -X stream` and started with
 * `pg_ctl` on a random free port of 127.0.0.1, streaming the primary's WAL and replaying it. It
 * lags as a real replica does, and its replay can be paused (`pg_wal_replay_pause()`) to hold it
 * behind on purpose.
 *
 * The primary must accept replication connections from 127.0.0.1 (a `host replication` line in
 * its pg_hba.conf: `all` does not cover them); `.ci/run` adds one. Where a standby cannot be made,
 * {@link streamingReplicaOrSkip} returns the reason as a skip, except in CI
 * (`TOKENQUERY_TEST_STREAMING_REPLICA=required`), where it is an error.
 *
 * The copy is of the whole cluster (pg_basebackup cannot copy one database), so its size is the
 * test server's: other test files' databases included. Every standby lives in
 * `<tmpdir>/tq-standby-<pid>-…`; it is stopped and removed by `stop()`, by the process's exit
 * (or SIGINT/SIGTERM) when a test did not get that far, and by the next run when the process
 * that made it was SIGKILLed.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../../internal/testing/net.js';
import { eventually } from '../../../internal/testing/wait.js';
import { querySql, TEST_POSTGRES_URL } from './test-database.js';

const run = promisify(execFile);
const DIR_PREFIX = 'tq-standby-';
/** Set by `.ci/run`: a standby that cannot be made fails the tests instead of skipping them. */
const REQUIRED = process.env.TOKENQUERY_TEST_STREAMING_REPLICA === 'required';
/** Hot-standby settings that must be at least the primary's, or the standby refuses to start. */
const AT_LEAST_PRIMARY = [
  'max_connections',
  'max_prepared_transactions',
  'max_locks_per_transaction',
  'max_wal_senders',
  'max_worker_processes',
];

export interface StreamingReplica {
  /** The standby's port on 127.0.0.1. */
  port: number;
  /** `primaryUrl` (a connection string to the test server) pointed at the standby: same database, user and parameters. */
  urlOf(primaryUrl: string): string;
  /** Milliseconds from the start until the standby streamed, in recovery. */
  madeInMs: number;
  /** Of those, pg_basebackup's: the primary's checkpoint, then the copy. */
  backupMs: number;
  /** Bytes the base backup copied (the standby's data directory when it started). */
  copiedBytes: number;
  /** Stops replay (WAL still streams in) and waits until the standby says it is paused. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /**
   * Waits until the standby has replayed all the WAL the primary had written when called, and
   * returns how long that took (ms). Rejects after `timeoutMs`.
   */
  catchUp(timeoutMs?: number): Promise<number>;
  /**
   * How far behind the primary the standby is now, as the primary sees it (pg_stat_replication):
   * the WAL bytes not replayed yet, and the last replay lag PostgreSQL measured (null when idle).
   */
  lag(): Promise<{ bytesBehind: number; replayLagMs: number | null }>;
  /** Stops the standby and removes its directory. Safe to call twice. */
  stop(): Promise<void>;
}

/** A standby that cannot be made on this machine, with the reason and what would fix it. */
export class StreamingReplicaUnavailable extends Error {
  override name = 'StreamingReplicaUnavailable';
}

const isRoot = () => process.getuid?.() === 0;

/** argv that runs `command` as the `postgres` OS user when we are root (pg_ctl refuses root). */
function asPostgres(command: string, args: readonly string[]): [string, string[]] {
  return isRoot() ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, [...args]];
}

function lastLines(error: unknown): string {
  const stderr = (error as { stderr?: string | Buffer }).stderr?.toString().trim();
  const text = stderr || (error instanceof Error ? error.message : String(error));
  return text.split('\n').slice(-3).join(' / ');
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Stops (immediately: it is thrown away) the cluster in `dataDir`, if one runs there, and removes `base`. */
function destroySync(bin: string, base: string): void {
  const dataDir = join(base, 'data');
  if (existsSync(join(dataDir, 'postmaster.pid'))) {
    const [command, args] = asPostgres(join(bin, 'pg_ctl'), ['stop', '-D', dataDir, '-m', 'immediate', '-w']);
    try {
      execFileSync(command, args, { stdio: 'pipe', cwd: base });
    } catch {
      // Not running (a stale pid file): nothing to stop.
    }
  }
  rmSync(base, { recursive: true, force: true });
}

/** Stops and removes standbys left by test processes of this machine that died. */
function sweepOrphans(bin: string): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const pid = Number(name.slice(DIR_PREFIX.length).split('-')[0]);
    if (!Number.isInteger(pid) || pid <= 0 || processAlive(pid)) continue;
    destroySync(bin, join(tmpdir(), name));
  }
}

function directoryBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += directoryBytes(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}

/** The server binaries of the primary's major version (Debian's layout), or `TOKENQUERY_PG_BIN`. */
async function serverBinaries(): Promise<{ bin: string; settings: Map<string, string> }> {
  const rows = await querySql<{ name: string; setting: string }>(
    TEST_POSTGRES_URL,
    'SELECT name, setting FROM pg_settings WHERE name = ANY($1)',
    [[...AT_LEAST_PRIMARY, 'server_version_num', 'wal_level']],
  );
  const settings = new Map(rows.map((row) => [row.name, row.setting]));
  if (settings.get('wal_level') === 'minimal') {
    throw new StreamingReplicaUnavailable(
      'the test server runs with wal_level = minimal, which cannot feed a standby; set wal_level = replica and restart it',
    );
  }
  const major = Math.floor(Number(settings.get('server_version_num')) / 10_000);
  const bin = process.env.TOKENQUERY_PG_BIN ?? `/usr/lib/postgresql/${major}/bin`;
  for (const tool of ['pg_basebackup', 'pg_ctl']) {
    if (!existsSync(join(bin, tool))) {
      throw new StreamingReplicaUnavailable(
        `${join(bin, tool)} is missing: the PostgreSQL ${major} server binaries are needed (set TOKENQUERY_PG_BIN to their directory)`,
      );
    }
  }
  return { bin, settings };
}

/** Makes and starts a hot standby of the test server. Rejects with {@link StreamingReplicaUnavailable} when it cannot. */
export async function startStreamingReplica(): Promise<StreamingReplica> {
  const primary = new URL(TEST_POSTGRES_URL);
  if (!['127.0.0.1', 'localhost'].includes(primary.hostname)) {
    throw new StreamingReplicaUnavailable(
      `the test server (${primary.hostname}) is not on this machine; a standby is copied from a local one`,
    );
  }
  const user = decodeURIComponent(primary.username) || 'postgres';
  const primaryPort = primary.port || '5432';
  const started = Date.now();
  let bin: string;
  let settings: Map<string, string>;
  try {
    ({ bin, settings } = await serverBinaries());
  } catch (error) {
    if (error instanceof StreamingReplicaUnavailable) throw error;
    throw new StreamingReplicaUnavailable(`the test server cannot be asked: ${lastLines(error)}`, {
      cause: error,
    });
  }
  sweepOrphans(bin);

  const base = mkdtempSync(join(tmpdir(), `${DIR_PREFIX}${process.pid}-`));
  const dataDir = join(base, 'data');
  let owner: { uid: number; gid: number } | undefined;
  let destroyed = false;
  const destroy = () => {
    if (destroyed) return;
    destroyed = true;
    process.off('exit', destroy);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    destroySync(bin, base);
  };
  process.on('exit', destroy);
  // A test run stopped by a signal stops its standby too, then dies of the signal as it would have.
  const onSignal = (signal: NodeJS.Signals) => {
    destroy();
    process.kill(process.pid, signal);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    if (isRoot()) {
      const id = (flag: string) =>
        Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
      try {
        owner = { uid: id('-u'), gid: id('-g') };
      } catch (error) {
        throw new StreamingReplicaUnavailable(
          `running as root, and there is no postgres OS user to run the standby: ${lastLines(error)}`,
        );
      }
      chownSync(base, owner.uid, owner.gid);
    }
    const [backup, backupArgs] = asPostgres(join(bin, 'pg_basebackup'), [
      ...['-h', primary.hostname, '-p', primaryPort, '-U', user, '-D', dataDir],
      // -R: standby.signal and primary_conninfo; -X stream: the WAL written meanwhile; -c fast: no
      // wait for a spread checkpoint (up to minutes); -N: a throwaway copy needs no fsync.
      ...['-R', '-X', 'stream', '-c', 'fast', '-N'],
    ]);
    const backupStarted = Date.now();
    try {
      await run(backup, backupArgs, { cwd: base });
    } catch (error) {
      const reason = lastLines(error);
      throw new StreamingReplicaUnavailable(
        /pg_hba\.conf|replication connection/.test(reason)
          ? `the test server refuses replication connections (${reason}); add \`host replication ${user} 127.0.0.1/32 trust\` to its pg_hba.conf and reload it (.ci/run does)`
          : `pg_basebackup of the test server failed: ${reason}`,
        { cause: error },
      );
    }
    const backupMs = Date.now() - backupStarted;
    const copiedBytes = directoryBytes(dataDir);

    // Debian keeps postgresql.conf and pg_hba.conf outside the data directory, so the copy has
    // none: the standby gets its own, on 127.0.0.1 only, its socket in its own directory.
    const atLeast = AT_LEAST_PRIMARY.filter((setting) => settings.has(setting)).map(
      (setting) => `${setting} = ${settings.get(setting)}`,
    );
    const configure = (port: number) => {
      const files: [string, string][] = [
        [
          'postgresql.conf',
          [
            "listen_addresses = '127.0.0.1'",
            `port = ${port}`,
            // Also the walreceiver's application_name: how lag() finds it in pg_stat_replication.
            `cluster_name = '${DIR_PREFIX}${port}'`,
            `unix_socket_directories = '${base}'`,
            'hot_standby = on',
            'fsync = off',
            'shared_buffers = 32MB',
            ...atLeast,
            '',
          ].join('\n'),
        ],
        ['pg_hba.conf', 'local all all trust\nhost all all 127.0.0.1/32 trust\n'],
        ['pg_ident.conf', ''],
      ];
      for (const [file, text] of files) {
        const path = join(dataDir, file);
        writeFileSync(path, text, { mode: 0o600 });
        if (owner) chownSync(path, owner.uid, owner.gid);
      }
    };
    const [ctl, ctlArgs] = asPostgres(join(bin, 'pg_ctl'), [
      ...['start', '-D', dataDir, '-l', join(base, 'server.log'), '-w', '-t', '60'],
    ]);
    let port = 0;
    // A free port can be taken between freePort() and the server's bind: try another one.
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      configure(port);
      try {
        await run(ctl, ctlArgs, { cwd: base });
        break;
      } catch (error) {
        const log = existsSync(join(base, 'server.log'))
          ? execFileSync('tail', ['-n', '3', join(base, 'server.log')], { encoding: 'utf8' }).trim()
          : '';
        if (attempt < 3 && /could not bind|Address already in use/.test(log)) continue;
        throw new StreamingReplicaUnavailable(`the standby did not start: ${lastLines(error)} ${log}`, {
          cause: error,
        });
      }
    }
    const clusterName = `${DIR_PREFIX}${port}`;

    const adminUrl = `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/postgres`;
    // Answering, in recovery, and streaming: only then does catchUp mean anything.
    await eventually(
      async () => {
        const [row] = await querySql<{ recovery: boolean; streaming: boolean }>(
          adminUrl,
          "SELECT pg_is_in_recovery() AS recovery, EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming') AS streaming",
        );
        if (row?.recovery === false) throw new Error('the standby is not in recovery');
        return row?.streaming === true ? true : undefined;
      },
      30_000,
      'the standby to stream from the primary',
      20,
    );
    const madeInMs = Date.now() - started;

    return {
      port,
      madeInMs,
      backupMs,
      copiedBytes,
      urlOf(primaryUrl) {
        const url = new URL(primaryUrl);
        url.hostname = '127.0.0.1';
        url.port = String(port);
        return url.toString();
      },
      async pauseReplay() {
        await querySql(adminUrl, 'SELECT pg_wal_replay_pause()');
        await eventually(
          async () => {
            const [row] = await querySql<{ state: string }>(
              adminUrl,
              'SELECT pg_get_wal_replay_pause_state() AS state',
            );
            return row?.state === 'paused' ? true : undefined;
          },
          10_000,
          'replay to pause',
          10,
        );
      },
      async resumeReplay() {
        await querySql(adminUrl, 'SELECT pg_wal_replay_resume()');
      },
      async catchUp(timeoutMs = 20_000) {
        const from = Date.now();
        const [target] = await querySql<{ lsn: string }>(
          TEST_POSTGRES_URL,
          'SELECT pg_current_wal_lsn()::text AS lsn',
        );
        await eventually(
          async () => {
            const [row] = await querySql<{ done: boolean }>(
              adminUrl,
              'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done',
              [target!.lsn],
            );
            return row?.done === true ? true : undefined;
          },
          timeoutMs,
          `the standby to replay the primary's WAL up to ${target!.lsn}`,
          10,
        );
        return Date.now() - from;
      },
      async lag() {
        const [row] = await querySql<{ bytes: string | null; ms: number | null }>(
          TEST_POSTGRES_URL,
          `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::text AS bytes,
                  (extract(epoch FROM replay_lag) * 1000)::float8 AS ms
             FROM pg_stat_replication WHERE application_name = $1`,
          [clusterName],
        );
        if (row === undefined)
          throw new Error(`the primary has no replication connection from ${clusterName}`);
        return { bytesBehind: Number(row.bytes ?? 0), replayLagMs: row.ms };
      },
      async stop() {
        destroy();
      },
    };
  } catch (error) {
    destroy();
    throw error;
  }
}

/**
 * For a test file: a standby, or the reason none can be made here (to skip with). In CI
 * (`TOKENQUERY_TEST_STREAMING_REPLICA=required`, set by `.ci/run`) the reason is thrown instead:
 * CI must not pass without the replica tested.
 */
export async function streamingReplicaOrSkip(): Promise<
  { replica: StreamingReplica; skip?: undefined } | { replica?: undefined; skip: string }
> {
  try {
    return { replica: await startStreamingReplica() };
  } catch (error) {
    if (!(error instanceof StreamingReplicaUnavailable)) throw error;
    if (REQUIRED) {
      throw new Error(
        `TOKENQUERY_TEST_STREAMING_REPLICA=required (set by .ci/run), and no streaming replica of the test server can be made: ${error.message}`,
        { cause: error },
      );
    }
    return { skip: `no streaming replica of the test server can be made here: ${error.message}` };
  }
}
