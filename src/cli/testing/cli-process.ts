/**
 * Runs the real, compiled CLI (`node bin/tokenquery.js`) as a child process, for end-to-end tests.
 * Children get a clean environment (no TOKENQUERY_* from the caller) and a temporary working
 * directory, so the default `./data/` never lands in the repository.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The CLI tests take these from here with the rest of their helpers; they live with the other test helpers.
export { freePort } from '../../internal/testing/net.js';
export { eventually } from '../../internal/testing/wait.js';

/** dist/src/cli/testing/ → repository root. */
export const BIN = fileURLToPath(new URL('../../../../bin/tokenquery.js', import.meta.url));

export interface CliOptions {
  /** Extra environment variables (TOKENQUERY_* from the test runner's own environment are dropped). */
  env?: Record<string, string>;
  /** Working directory. Default: a fresh temporary directory shared by the whole test file. */
  cwd?: string;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to exit. */
  ms: number;
}

let sharedCwd: string | undefined;

/** A temporary directory, removed by `removeTempDirs`. */
const tempDirs: string[] = [];
export function tempDir(prefix = 'tokenquery-cli-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  sharedCwd = undefined;
}

function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('TOKENQUERY_') && name !== 'NODE_TEST_CONTEXT') env[name] = value;
  }
  return { ...env, ...extra };
}

/**
 * `tokenquery start` over one EVM chain as the scenarios run it: its `eth` node at `rpc`, the
 * store at `db`, a random API port, 50 ms polls, info logs unless `logLevel` says otherwise.
 */
export function startOneChainArgs(options: {
  rpc: string;
  db: string;
  finality: number;
  logLevel?: string;
}): string[] {
  return [
    'start',
    '--rpc',
    `eth=${options.rpc}`,
    '--db',
    options.db,
    '--finality',
    `eth=${options.finality}`,
    '--port',
    '0',
    '--poll-interval',
    '50',
    '--log-level',
    options.logLevel ?? 'info',
  ];
}

/** A running CLI process whose output is collected as it comes. */
export interface CliProcess {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the output so far once `predicate(stdout, stderr)` holds; rejects on exit or timeout. */
  waitFor(
    predicate: (stdout: string, stderr: string) => boolean,
    timeoutMs: number,
    what?: string,
  ): Promise<void>;
  /** Resolves when the process has exited. */
  readonly exited: Promise<CliResult>;
  /** Sends `signal` and waits for the exit; SIGKILL after `graceMs`. Safe to call after exit. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<CliResult>;
}

export function spawnCli(args: readonly string[], options: CliOptions = {}): CliProcess {
  sharedCwd ??= tempDir();
  const started = Date.now();
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? sharedCwd,
    env: childEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const listener of [...listeners]) listener();
  };
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    notify();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    notify();
  });
  const exited = new Promise<CliResult>((resolve) => {
    child.once('close', (code, signal) => {
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started });
      notify();
    });
  });
  let done = false;
  void exited.then(() => {
    done = true;
  });

  return {
    child,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    waitFor(predicate, timeoutMs, what = 'the expected output') {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (predicate(stdout, stderr)) finish();
          else if (done)
            finish(new Error(`the CLI exited before ${what}:\nstdout: ${stdout}\nstderr: ${stderr}`));
        };
        const timer = setTimeout(
          () => finish(new Error(`no ${what} within ${timeoutMs} ms:\nstdout: ${stdout}\nstderr: ${stderr}`)),
          timeoutMs,
        );
        const finish = (error?: Error) => {
          clearTimeout(timer);
          listeners.delete(check);
          if (error) reject(error);
          else resolve();
        };
        listeners.add(check);
        check();
      });
    },
    async stop(signal = 'SIGTERM', graceMs = 15_000) {
      if (!done) {
        child.kill(signal);
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      return exited;
    },
  };
}

/** Runs the CLI to completion (killed after `timeoutMs`). */
export async function runCli(
  args: readonly string[],
  options: CliOptions & { timeoutMs?: number } = {},
): Promise<CliResult> {
  const cli = spawnCli(args, options);
  const timer = setTimeout(() => cli.child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
  const result = await cli.exited;
  clearTimeout(timer);
  return result;
}

/** The non-empty lines of a text. */
export const lines = (text: string): string[] => text.split('\n').filter((line) => line.trim() !== '');

/**
 * The shape every user error must have: exit code 2, nothing on stdout, exactly one line on
 * stderr starting with `tokenquery: `, no stack frame, and none of `secrets` anywhere.
 */
export function assertOneLineError(
  result: CliResult,
  pattern: RegExp,
  secrets: readonly string[] = [],
): void {
  const context = `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
  assert.equal(result.code, 2, context);
  assert.equal(result.stdout, '', context);
  assert.equal(lines(result.stderr).length, 1, context);
  assert.ok(result.stderr.startsWith('tokenquery: '), context);
  assert.ok(result.stderr.endsWith('\n'), context);
  assert.doesNotMatch(result.stderr, /^\s+at /m, context);
  assert.match(result.stderr.slice(0, -1), pattern, context);
  for (const secret of secrets)
    assert.ok(!`${result.stdout}${result.stderr}`.includes(secret), `a secret leaked: ${context}`);
}

/** The JSON log lines (pino) of a stderr text; other lines are ignored. */
export function logLines(stderr: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of lines(stderr)) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a line cut by a concurrent write; not ours to judge here
    }
  }
  return out;
}

/** Waits for the `tokenquery started` / `tokenquery serving` log line and returns its `url`. */
export async function apiUrl(cli: CliProcess, message: string, timeoutMs = 15_000): Promise<string> {
  let url: string | undefined;
  await cli.waitFor(
    (_out, err) => {
      const line = logLines(err).find((l) => l.msg === message && typeof l.url === 'string');
      url = line?.url as string | undefined;
      return url !== undefined;
    },
    timeoutMs,
    `the "${message}" log line`,
  );
  return url!;
}

/** GET a path and parse the JSON body. */
export async function getJson(
  url: string,
): Promise<{ status: number; body: Record<string, unknown>; text: string }> {
  const res = await fetch(url);
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // left empty; callers assert on status and text
  }
  return { status: res.status, body, text };
}
