/**
 * One base error for the whole project. `shortMessage` is safe to show a user
 * (one line, no secrets); `details` may carry more for logs. Modelled on viem's BaseError.
 */
export class TokenqueryError extends Error {
  override name = 'TokenqueryError';
  readonly shortMessage: string;
  readonly details: string | undefined;

  constructor(shortMessage: string, options: { cause?: unknown; details?: string } = {}) {
    super(options.details ? `${shortMessage}\n\nDetails: ${options.details}` : shortMessage, {
      cause: options.cause,
    });
    this.shortMessage = shortMessage;
    this.details = options.details;
  }
}

/** A mistake in how the user configured or invoked tokenquery: reported as one line, exit code 2. */
export class UserError extends TokenqueryError {
  override name = 'UserError';
}

/** Something the indexer cannot recover from on its own (for example a reorg deeper than the window). */
export class FatalIndexerError extends TokenqueryError {
  override name = 'FatalIndexerError';
}

/** The message of any thrown value, for logs. Never includes a stack. */
export function errorMessage(error: unknown): string {
  if (error instanceof TokenqueryError) return error.shortMessage;
  if (error instanceof Error) return error.message;
  return String(error);
}

/**
 * What anyone may learn about a failure: a short class, never the text (which can name internal
 * hosts, ports, user names, a writer's host name and pid, or a provider's own words). The full
 * text goes to the log and to the operator's authenticated view (docs/api.md, Service routes).
 */
export const ERROR_CLASSES = [
  'rpc unreachable',
  'rpc timeout',
  'rpc error',
  'database unreachable',
  'database error',
  'disk full',
  'reorg too deep',
  'indexer stopped',
  'internal error',
] as const;
export type ErrorClass = (typeof ERROR_CLASSES)[number];

const NETWORK_FAULT =
  /\b(ECONNREFUSED|ECONNRESET|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|EPIPE|fetch failed|socket hang up|unreachable|connection (refused|terminated|reset|closed))\b/i;
const TIMEOUT = /\b(timed out|timeout|ETIMEDOUT)\b/i;
/** The store's disk is full: SQLite's SQLITE_FULL, the OS's ENOSPC, PostgreSQL's 53100 (`could not extend file`). */
const DISK_FULL =
  /\b(disk is full|database or disk is full|SQLITE_FULL|ENOSPC|no space left on device|could not extend file|53100)\b/i;
/** Whether an error says the store's disk is full, by its code where it has one, else by its words. */
export function isDiskFull(error: unknown): boolean {
  const { code } = (error ?? {}) as { code?: unknown };
  return (
    code === 'SQLITE_FULL' || code === 'ENOSPC' || code === '53100' || DISK_FULL.test(errorMessage(error))
  );
}
const DATABASE =
  /\b(postgres(ql)?|sqlite\w*|database|SQL|SQLSTATE|relation|deadlock|too many clients|password authentication|writer lease)\b|:5432\b/i;
const RPC =
  /\b(rpc|json-rpc|eth_\w+|get(block|applicationlog|rawtransaction)\w*|node|provider|endpoint)\b|\bHTTP [0-9]{3}\b|:8545\b/i;

/**
 * The class of a recorded error text: the class it starts with (`rpc unreachable: ...`, as the
 * indexer records them), else a guess from its words (texts an older indexer recorded).
 */
export function errorClassOf(text: string): ErrorClass {
  for (const name of ERROR_CLASSES) {
    if (text.startsWith(`${name}: `) || text === name) return name;
  }
  if (/\breorg\b/i.test(text)) return 'reorg too deep';
  if (DISK_FULL.test(text)) return 'disk full';
  if (DATABASE.test(text)) {
    const cannotConnect = /password authentication|too many clients/i.test(text);
    return cannotConnect || NETWORK_FAULT.test(text) || TIMEOUT.test(text)
      ? 'database unreachable'
      : 'database error';
  }
  if (RPC.test(text)) {
    if (TIMEOUT.test(text)) return 'rpc timeout';
    if (NETWORK_FAULT.test(text) || /\bHTTP (429|5[0-9]{2})\b/.test(text)) return 'rpc unreachable';
    return 'rpc error';
  }
  return 'internal error';
}

/**
 * Removes credentials and query strings from URLs inside a text, so RPC URLs such as
 * `https://user:secret@node/path?key=...` and database URLs such as
 * `postgres://user:secret@db:5432/tokenquery?sslpassword=...` (and `redis://:secret@host`) never
 * reach a log line or a response.
 * RPC URLs keep only their host (a path can hold an API key: `/v3/<key>`); database URLs keep
 * their host and database name, which are not secret and tell which database is meant.
 * Everything up to the last `@` of the URL is dropped, so a password holding an unescaped `@`,
 * `/`, `?` or `#` cannot leak either.
 */
export function redactUrls(text: string): string {
  return text.replace(
    /\b(https?|wss?|rediss?|postgres(?:ql)?):\/\/([^\s'"<>]+)/gi,
    (_m, scheme: string, rest: string) => {
      const afterCredentials = rest.slice(rest.lastIndexOf('@') + 1);
      const host = /^[^/?#]*/.exec(afterCredentials)![0];
      if (!/^postgres/i.test(scheme)) return `${scheme}://${host}/…`;
      const database = /^\/([^/?#]*)/.exec(afterCredentials.slice(host.length))?.[1] ?? '';
      return `${scheme}://${host}/${database}`;
    },
  );
}

/**
 * Several user mistakes found at once (a config file, a token list): `problems` holds one
 * self-contained line each, and the CLI prints them all. `shortMessage` is the first, with a count.
 */
export class ProblemsError extends UserError {
  override name = 'ProblemsError';
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    const [first = 'invalid input', ...rest] = problems;
    super(rest.length === 0 ? first : `${first} (and ${rest.length} more)`);
    this.problems = problems.length === 0 ? [first] : problems;
  }
}

/**
 * True when PostgreSQL cancelled a query that was right in itself and may succeed if tried again:
 * SQLSTATE 40001 (a serialization failure; also what a hot standby raises when it cancels a query
 * that holds up the replay of the primary's changes, after `max_standby_streaming_delay`) and
 * 40P01 (a deadlock). The API answers it 503 with `Retry-After`, as it does an unreachable store.
 */
export function isStoreConflict(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return code === '40001' || code === '40P01';
}

/** Node's socket errors that mean the server at the other end is not there. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EPIPE',
  'ETIMEDOUT',
]);
/** node-postgres's own messages for a connection that broke or never came up. */
const UNREACHABLE_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

/**
 * True when a store's `error` says the database cannot be reached at the moment rather than that
 * a query is wrong: a refused or broken connection, or PostgreSQL's SQLSTATE class 08 (connection
 * exception), 57P01–57P03 (shutting down, crashed, starting up) and 53300 (too many connections).
 * The API answers it 503, and `/status` shows it as `database unreachable`.
 */
export function isStoreUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (UNREACHABLE_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
    if (code === '57P01' || code === '57P02' || code === '57P03' || code === '53300') return true;
  }
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' && UNREACHABLE_MESSAGES.test(message);
}
