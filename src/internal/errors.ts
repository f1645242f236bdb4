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
 * `https://user:secret@node/path?key=...` never reach a log line or a response.
 */
export function redactUrls(text: string): string {
  return text.replace(
    /\b(https?|wss?):\/\/([^\s/@'"]+@)?([^\s/?#'"]+)[^\s'"]*/gi,
    (_m, scheme: string, _cred, host: string) => {
      return `${scheme}://${host}/…`;
    },
  );
}
