import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DevchainError, rpc } from './rpc.js';

/** How to start anvil. Every field is optional. */
export interface AnvilOptions {
  /** Seconds between blocks (interval mining). Default: unset, anvil mines one block per transaction (automine). */
  blockTime?: number;
  /** Block gas limit. Default: anvil's (30,000,000 at the time of writing). Bulk `spray` wants more, e.g. 1e9. */
  gasLimit?: number | bigint;
  /** Chain id. Default: anvil's, 31337. */
  chainId?: number;
  /** Number of unlocked dev accounts. Default: anvil's, 10. */
  accounts?: number;
  /**
   * Drop anvil's own output. Default: true. When false, anvil's stdout and stderr are copied to this
   * process's stderr, so that stdout stays clean for command output.
   */
  silent?: boolean;
  /** Extra command-line arguments, appended last (for example `['--hardfork', 'prague']`). */
  args?: readonly string[];
  /** Path to an anvil binary. Default: the one shipped by the `@foundry-rs/anvil` npm package. */
  binary?: string;
  /** How long to wait for anvil to answer `eth_chainId`. Default: 20,000 ms. */
  startTimeoutMs?: number;
}

/** A running anvil. */
export interface AnvilInstance {
  /** JSON-RPC endpoint, `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** Process id of the anvil binary itself (no wrapper process in between). */
  readonly pid: number;
  /**
   * Where anvil writes the chain states it moves out of memory (`--cache-path`): a directory of
   * its own in the OS temporary directory, removed once the process is gone.
   */
  readonly cacheDir: string;
  /** Stops anvil (SIGTERM, then SIGKILL after 3 s) and resolves once the process is gone. Idempotent. */
  stop(): Promise<void>;
}

/** Per-platform package names, as `@foundry-rs/anvil`'s own `const.mjs` maps them. */
const PLATFORM_PACKAGES: Record<string, Record<string, string>> = {
  darwin: { x64: '@foundry-rs/anvil-darwin-amd64', arm64: '@foundry-rs/anvil-darwin-arm64' },
  linux: { x64: '@foundry-rs/anvil-linux-amd64', arm64: '@foundry-rs/anvil-linux-arm64' },
  win32: { x64: '@foundry-rs/anvil-win32-amd64' },
};

/**
 * Finds the anvil binary of the `@foundry-rs/anvil` package the same way its `bin.mjs` does (the
 * platform package's `bin/anvil`, else the postinstall download in `@foundry-rs/dist/`), so that we
 * spawn the binary directly instead of a node wrapper that would sit between us and anvil.
 */
export function resolveAnvilBinary(): string {
  const binaryName = process.platform === 'win32' ? 'anvil.exe' : 'anvil';
  const platformPackage = PLATFORM_PACKAGES[process.platform]?.[process.arch];
  const require = createRequire(import.meta.url);
  const tried: string[] = [];
  if (platformPackage) {
    try {
      const candidate = require.resolve(`${platformPackage}/bin/${binaryName}`);
      if (existsSync(candidate)) return candidate;
      tried.push(candidate);
    } catch {
      tried.push(`${platformPackage}/bin/${binaryName}`);
    }
  }
  try {
    const wrapperDir = dirname(require.resolve('@foundry-rs/anvil/package.json'));
    const candidate = join(wrapperDir, '..', 'dist', binaryName);
    if (existsSync(candidate)) return candidate;
    tried.push(candidate);
  } catch {
    tried.push('@foundry-rs/anvil');
  }
  throw new DevchainError('anvil binary not found: install the @foundry-rs/anvil npm package (npm install)', {
    details: `platform ${process.platform}/${process.arch}${platformPackage ? '' : ' (not supported by @foundry-rs/anvil)'}; tried ${tried.join(', ')}`,
  });
}

// Every anvil this process started and has not stopped yet, with its cache directory, so they can
// be killed and their directories removed when it exits.
const running = new Map<ChildProcess, string>();
let exitHooksInstalled = false;

function killAllNow(): void {
  for (const [child, cacheDir] of running) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
    removeCacheDir(cacheDir);
  }
  running.clear();
}

/**
 * Anvil leaves its states directory behind when it stops, whatever the signal, and a long chain's
 * (a million-transfer benchmark's) holds gigabytes: left in `~/.foundry/anvil/tmp`, its default,
 * every run would leak that much disk.
 */
function removeCacheDir(cacheDir: string): void {
  rmSync(cacheDir, { recursive: true, force: true });
}

/**
 * Kills every running anvil when this process ends: on `exit` (normal end, process.exit, uncaught
 * error) and on SIGINT/SIGTERM/SIGHUP, which would otherwise end Node without an `exit` event.
 * When our handler is the only one for a signal, the signal is re-raised after cleanup so the
 * process still dies of it; when the application has its own handler, that handler decides.
 */
function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.on('exit', killAllNow);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      killAllNow();
      if (process.listenerCount(signal) === 1) {
        process.off(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}

function buildArgs(options: AnvilOptions): string[] {
  // Port 0: the OS picks a free port and anvil prints it, so there is no race between choosing a port
  // and binding it.
  const args = ['--host', '127.0.0.1', '--port', '0'];
  if (options.blockTime !== undefined) {
    if (!(options.blockTime > 0))
      throw new DevchainError(`blockTime must be positive, got ${options.blockTime}`);
    args.push('--block-time', String(options.blockTime));
  }
  if (options.gasLimit !== undefined) args.push('--gas-limit', BigInt(options.gasLimit).toString());
  if (options.chainId !== undefined) args.push('--chain-id', String(options.chainId));
  if (options.accounts !== undefined) args.push('--accounts', String(options.accounts));
  args.push(...(options.args ?? []));
  return args;
}

const LISTENING = /Listening on 127\.0\.0\.1:(\d+)/;

/**
 * Starts a real anvil on 127.0.0.1 and a free port, and resolves once it answers `eth_chainId`.
 * The child is killed by `stop()`, and also when this process exits, so no anvil outlives its parent
 * (except if the parent is killed with SIGKILL, which no process can intercept).
 */
export async function startAnvil(options: AnvilOptions = {}): Promise<AnvilInstance> {
  const binary = options.binary ?? resolveAnvilBinary();
  const args = buildArgs(options);
  const silent = options.silent ?? true;
  const timeoutMs = options.startTimeoutMs ?? 20_000;

  installExitHooks();
  const cacheDir = mkdtempSync(join(tmpdir(), 'tokenquery-anvil-'));
  if (!args.includes('--cache-path')) args.push('--cache-path', cacheDir);
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  running.set(child, cacheDir);

  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  child.once('exit', () => {
    running.delete(child);
    removeCacheDir(cacheDir);
  });

  // Keep the last output for error messages; always drain the pipes, or anvil blocks on a full pipe.
  let recent = '';
  const remember = (chunk: Buffer): void => {
    recent = (recent + chunk.toString('utf8')).slice(-4000);
    if (!silent) process.stderr.write(chunk);
  };
  child.stderr!.on('data', remember);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(timer);
      }
      running.delete(child);
      // A binary that never started emits no `exit`.
      removeCacheDir(cacheDir);
    })();
    return stopping;
  };

  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new DevchainError(`anvil did not start within ${timeoutMs} ms`, { details: recent })),
        timeoutMs,
      );
      child.once('error', (cause) => {
        clearTimeout(timer);
        reject(new DevchainError(`cannot run anvil at ${binary}`, { cause }));
      });
      // `close`, not `exit`: it comes after the output pipes are drained, so `recent` holds anvil's
      // last words (its own message for bad arguments) and not only what had been read by then.
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        reject(
          new DevchainError(`anvil exited during start-up (${signal ?? `code ${code}`})`, {
            details: recent,
          }),
        );
      });
      child.stdout!.on('data', (chunk: Buffer) => {
        remember(chunk);
        const match = LISTENING.exec(recent);
        if (match) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      });
    });
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        await rpc(url, 'eth_chainId');
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    return { url, port, pid: child.pid!, cacheDir, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
