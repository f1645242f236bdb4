/**
 * Reliability, disk full: `tokenquery start` backfills a sprayed anvil chain into a SQLite store
 * on a small size-limited tmpfs until the filesystem is full. Then:
 *
 * - the process stays up, the API keeps answering, `/status` shows the chain's last error (the
 *   disk is full) and the log says so in one warning line per retry (backoff, no stack trace);
 * - the store is not corrupt: `PRAGMA integrity_check` answers `ok`, and at its checkpoint every
 *   transfer, balance (against `balanceOf` at that block) and count equals the node's;
 * - once the filesystem is grown (`mount -o remount,size=…`) the same process resumes by itself,
 *   clears the error, and ends equal to the node: every transfer once, every balance and count
 *   exact; `tokenquery verify` agrees.
 *
 * Mounting needs root (CAP_SYS_ADMIN). Without it the test fails with a message saying so, unless
 * `TOKENQUERY_CHAOS_SKIP_MOUNT=1` opts out (the scenario is then skipped, visibly).
 *
 * A commit that fails on a full disk is retried in batches of half its span (evm-backfill.ts), so
 * the backfill fills each size to the brim rather than failing on one large batch: the test waits
 * for a commit after every growth. CI: ~24k transfers on 2, then 5, then 64 MiB. `npm run chaos`:
 * ~80k transfers on 2, 5, 10, then 256 MiB.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import type { AnvilInstance } from '../devchain/anvil.js';
import { getBlockNumber } from '../devchain/chain.js';
import { caughtUp, chaosSeed, openAt, recordResult, scaled } from '../indexer/testing/chaos.js';
import { diffStoreAgainstNode, readNodeTruth } from '../indexer/testing/evm-truth.js';
import { startSprayedChain } from '../indexer/testing/live-traffic.js';
import { silentLogger } from '../internal/logger.js';
import { waitFor } from '../internal/testing/wait.js';
import {
  apiUrl,
  getJson,
  logLines,
  removeTempDirs,
  runCli,
  spawnCli,
  startOneChainArgs,
  tempDir,
} from './testing/cli-process.js';

const logger = silentLogger();
const FINALITY = 3;
const SIZE = scaled(
  { transfers: 24_000, perTx: 100, fills: [2, 5], finalMb: 64 },
  { transfers: 80_000, perTx: 100, fills: [2, 5, 10], finalMb: 256 },
);
const SKIP = process.env.TOKENQUERY_CHAOS_SKIP_MOUNT === '1';

let anvil: AnvilInstance;
const dir = tempDir('tq-disk-full-');
const mountPoint = join(dir, 'disk');
let mounted = false;

function mount(sizeMb: number): void {
  mkdirSync(mountPoint, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', mountPoint], { stdio: 'pipe' });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(
      `the disk-full scenario needs to mount a tmpfs (root or CAP_SYS_ADMIN): mount failed: ${stderr || String(error)}; ` +
        'set TOKENQUERY_CHAOS_SKIP_MOUNT=1 to skip it where mounting is impossible',
    );
  }
  mounted = true;
}

function resize(sizeMb: number): void {
  execFileSync('mount', ['-o', `remount,size=${sizeMb}m`, mountPoint], { stdio: 'pipe' });
}

function unmount(): void {
  if (!mounted) return;
  // Lazy: a store still open somewhere (a failed assertion mid-test) must not keep the mount.
  execFileSync('umount', ['-l', mountPoint], { stdio: 'pipe' });
  mounted = false;
}

before(async () => {
  if (SKIP) return;
  ({ anvil } = await startSprayedChain({
    transfers: SIZE.transfers,
    perTx: SIZE.perTx,
    second: 2,
    seeds: [11, 12],
  }));
});

after(async () => {
  try {
    unmount();
  } finally {
    await anvil?.stop();
    removeTempDirs();
  }
});

interface EthStatus {
  head: number;
  indexed: number;
  lastError: string | null;
}

async function ethStatus(base: string): Promise<EthStatus> {
  const { status, body, text } = await getJson(`${base}/status`);
  assert.equal(status, 200, `/status answered ${status}: ${text}`);
  return (body.chains as Record<string, EthStatus>).eth!;
}

function integrityCheck(location: string): string {
  const db = new Database(location, { readonly: true, fileMustExist: true });
  try {
    return (db.pragma('integrity_check') as { integrity_check: string }[])
      .map((r) => r.integrity_check)
      .join('; ');
  } finally {
    db.close();
  }
}

describe('disk full (sqlite)', () => {
  test('the disk fills mid-backfill: a clear error, no corruption, and the index resumes once there is room', {
    skip: SKIP ? 'TOKENQUERY_CHAOS_SKIP_MOUNT=1' : false,
  }, async () => {
    const seed = chaosSeed('disk-full');
    mount(SIZE.fills[0]!);
    const location = join(mountPoint, 'tokenquery.sqlite');
    const cli = spawnCli(startOneChainArgs({ rpc: anvil.url, db: location, finality: FINALITY }));
    try {
      const base = await apiUrl(cli, 'tokenquery started', 30_000);
      const head = await getBlockNumber(anvil.url);
      const fills: {
        sizeMb: number;
        checkpoint: number;
        error: string;
        retries: number;
        msToError: number;
      }[] = [];
      let fullSince = Date.now();
      for (const sizeMb of SIZE.fills) {
        if (sizeMb !== SIZE.fills[0]) {
          resize(sizeMb);
          fullSince = Date.now();
          // A commit goes through once the backoff is over: the checkpoint moves past the last
          // fill's (the error itself may be back by the next reading, when the disk fills again).
          const before = fills.at(-1)?.checkpoint ?? -1;
          await waitFor(
            'a commit after growing',
            async () => ((await ethStatus(base)).indexed ?? -1) > before,
            40_000,
            20,
          );
        }
        const retriesBefore = stepFailures(cli.stderr()).length;
        // The backfill goes on until the disk is full: the chain's last error says so.
        let status = await ethStatus(base);
        for (
          const deadline = Date.now() + 120_000;
          status.lastError === null;
          status = await ethStatus(base)
        ) {
          if (status.indexed >= head - FINALITY)
            throw new Error(
              `the backfill ended on ${sizeMb} MiB without filling it (make it smaller): ` +
                `${execFileSync('ls', ['-la', mountPoint])}\n${cli.stderr().slice(-3000)}`,
            );
          assert.ok(Date.now() < deadline, `the disk (${sizeMb} MiB) did not fill within 120 s`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const msToError = Date.now() - fullSince;
        assert.match(status.lastError!, /disk|full|space/i, `lastError: ${status.lastError}`);
        // Stays up and keeps retrying, with a backoff: a few warnings, one line each, no stack.
        // (the first failure, then at least one retry after a backoff of 0.5–1 s).
        await waitFor(
          'a retry while the disk is full',
          () => stepFailures(cli.stderr()).length >= retriesBefore + 2,
          35_000,
          20,
        ).catch((error: Error) => {
          const tail = cli.stderr().split('\n').slice(-12).join('\n');
          throw new Error(`${error.message}; /status ${JSON.stringify(status)}; log:\n${tail}`);
        });
        const failures = stepFailures(cli.stderr());
        const retries = failures.length - retriesBefore;
        assert.ok(retries <= 8, `${retries} retries in ${Date.now() - fullSince} ms: no backoff`);
        assert.equal(cli.child.exitCode, null, `start exited: ${cli.stderr().slice(-2000)}`);
        for (const line of failures) assert.match(String(line.err), /disk|full|space/i);
        assert.doesNotMatch(cli.stderr(), /^\s+at /m, 'a stack trace was written');
        assert.doesNotMatch(cli.stderr(), /"stack"/, 'a stack trace was logged');
        const errors = logLines(cli.stderr()).filter((l) => typeof l.level === 'number' && l.level >= 50);
        assert.deepEqual(errors, [], 'error log lines (the indexer must not stop)');

        // The API answers meanwhile, and the store is sound and exact at its checkpoint.
        const still = await ethStatus(base);
        // A WAL checkpoint can free room for one small batch (see below): then the error is
        // cleared by that commit, and the checkpoint moved.
        if (still.lastError !== null || still.indexed === status.indexed)
          assert.match(String(still.lastError), /disk|full|space/i);
        assert.equal(integrityCheck(location), 'ok');
        const store = await openAt(location, logger);
        let checkpoint: number;
        try {
          checkpoint = (await store.writer.getCheckpoint('eth'))?.block ?? -1;
          if (checkpoint >= 0) {
            // A backfill defers balance rows to its last batch (they hold `balancesBlock`):
            // transfers and counts must equal the node at the checkpoint, and, unless deferred,
            // balances and holder counts too; `verify` checks the deferred ones.
            const balancesBlock = (await store.writer.getChainStatus('eth'))?.balancesBlock;
            const diff = await diffStoreAgainstNode(
              store,
              'eth',
              await readNodeTruth(anvil.url, checkpoint),
              {
                supply: false,
                max: 100_000,
              },
            );
            const relevant =
              balancesBlock === undefined ? diff : diff.filter((line) => !/: balance of /.test(line));
            if (balancesBlock !== undefined && balancesBlock >= 0) {
              const atBalances = await diffStoreAgainstNode(
                store,
                'eth',
                await readNodeTruth(anvil.url, balancesBlock),
                { supply: false, max: 100_000 },
              );
              relevant.push(...atBalances.filter((line) => /: balance of /.test(line)));
            }
            // A WAL checkpoint can free room in the WAL, so a small batch may still commit on a
            // "full" disk: a comparison the checkpoint moved under is not a finding.
            const moved = ((await store.writer.getCheckpoint('eth'))?.block ?? -1) !== checkpoint;
            console.log(
              `# disk-full: ${sizeMb} MiB, checkpoint ${checkpoint}${moved ? ' (moved meanwhile)' : ''}`,
            );
            if (!moved)
              assert.deepEqual(
                relevant.slice(0, 20),
                [],
                `the store on a full disk differs from the node at its checkpoint ${checkpoint} (seed ${seed})`,
              );
            const verify = await runCli([
              'verify',
              '--db',
              location,
              '--rpc',
              `eth=${anvil.url}`,
              '--sample',
              '50',
            ]);
            assert.equal(verify.code, 0, `verify on a full disk: ${verify.stdout}${verify.stderr}`);
          }
        } finally {
          await store.close();
        }
        fills.push({ sizeMb, checkpoint, error: still.lastError!, retries, msToError });
      }

      assert.ok(
        fills.some((f) => f.checkpoint >= 0),
        `the disk never filled after a commit: ${JSON.stringify(fills)}`,
      );

      // Room again: the same process resumes and catches up, and clears the error.
      resize(SIZE.finalMb);
      const grown = Date.now();
      const store = await openAt(location, logger);
      try {
        await waitFor('the index to catch up', () => caughtUp(store, anvil.url, head), 120_000, 50);
        const resumeMs = Date.now() - grown;
        await waitFor(
          'the error to clear',
          async () => (await ethStatus(base)).lastError === null,
          10_000,
          50,
        );
        const result = await cli.stop('SIGTERM');
        assert.equal(result.code, 0, `exit ${result.code}: ${result.stderr.slice(-2000)}`);
        assert.equal(integrityCheck(location), 'ok');
        assert.deepEqual(
          await diffStoreAgainstNode(store, 'eth', await readNodeTruth(anvil.url, head)),
          [],
          `the resumed store differs from the node (seed ${seed})`,
        );
        const verify = await runCli([
          'verify',
          '--db',
          location,
          '--rpc',
          `eth=${anvil.url}`,
          '--sample',
          '50',
        ]);
        assert.equal(verify.code, 0, `verify: ${verify.stdout}${verify.stderr}`);
        const transfers = (await store.reader.listTokens('eth', 0, 100)).tokens.reduce(
          (n, t) => n + t.transferCount,
          0,
        );
        recordResult('disk-full', {
          backend: 'sqlite',
          seed,
          transfers,
          blocks: head,
          fills: fills.map((f) => `${f.sizeMb} MiB at block ${f.checkpoint}`),
          firstError: fills[0]!.error,
          maxRetriesLogged: Math.max(...fills.map((f) => f.retries)),
          resumeMs,
        });
      } finally {
        await store.close();
      }
    } finally {
      await cli.stop('SIGKILL');
      unmount();
    }
  });
});

/** The indexer's "indexing step failed; retrying" warnings. */
function stepFailures(stderr: string): Record<string, unknown>[] {
  return logLines(stderr).filter((l) => l.msg === 'indexing step failed; retrying');
}
