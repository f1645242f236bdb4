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
