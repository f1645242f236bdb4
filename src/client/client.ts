/**
 * A typed client for the Tokenview `/vipapi/` token interface, as tokenquery serves it: one
 * function per operation of the contract, results checked at run time against the contract's
 * JSON, Tokenview error envelopes turned into typed errors. It needs only `fetch`, so it runs
 * in Node 20+, browsers, Deno and Bun, and it works against any server with the same interface:
 * the 13 operations use only the contract's paths and its one authentication scheme (the
 * `apikey` query parameter). The address operations are Tokenview's own paths too; Token
 * Holders is tokenquery's (Tokenview has no holder list). `client.tokenquery` holds tokenquery's
 * own extras.
 */
import {
  apiErrorFor,
  TokenqueryClientError,
  TokenqueryNetworkError,
  TokenqueryResponseError,
  TokenqueryTimeoutError,
} from './errors.js';
import type {
  CallOptions,
  EvmOperations,
  FetchFunction,
  NeoOperations,
  PageOptions,
  TokenqueryClient,
  TokenqueryClientOptions,
  TokenqueryOnlyOperations,
} from './operations.js';
import {
  type Check,
  evmBalanceList,
  evmTokenPage,
  evmTokenSummary,
  evmTransferList,
  holderPage,
  isDecimalText,
  neoAssetPage,
  neoAssetSummary,
  neoBalanceList,
  neoContractList,
  neoTokenSummary,
  neoTransferList,
  ShapeError,
  tokenqueryStatus,
} from './validate.js';

/** Characters of a body kept in errors. */
const EXCERPT_CHARS = 200;

/** What a request returned, read completely. */
interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** Checks and normalizes `baseUrl`: http(s), no query or fragment, no trailing slash. */
function normalizeBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError('tokenquery client: baseUrl is not an absolute URL (e.g. http://127.0.0.1:8080)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`tokenquery client: baseUrl must be http or https, not ${url.protocol}`);
  }
  if (url.search !== '' || url.hash !== '') {
    throw new TypeError('tokenquery client: baseUrl must not have a query string or fragment');
  }
  if (url.username !== '' || url.password !== '') {
    // fetch refuses URLs with credentials; say so here, once, instead of on every call.
    throw new TypeError('tokenquery client: baseUrl must not hold a user name or password');
  }
  return url.href.replace(/\/+$/, '');
}

/**
 * One path segment from a caller's value: encoded, so that `/`, `?` or `#` cannot change the path.
 * `.` and `..` cannot be encoded away (URLs resolve `%2e` like `.`), so they are refused here;
 * `encodeURIComponent` already turns a `%` of the value into `%25`.
 */
function segment(value: unknown): string {
  const encoded = encodeURIComponent(String(value));
  if (encoded === '.' || encoded === '..') {
    throw new TypeError(`tokenquery client: ${JSON.stringify(String(value))} cannot be a path segment`);
  }
  return encoded;
}

/** Creates a client. Throws a `TypeError` at once for a bad `baseUrl`, an empty `apiKey` or a bad option. */
export function createTokenqueryClient(options: TokenqueryClientOptions): TokenqueryClient {
  const baseUrl = normalizeBaseUrl(options.baseUrl);
  const { apiKey } = options;
  if (typeof apiKey !== 'string' || apiKey === '') {
    throw new TypeError('tokenquery client: apiKey must be a non-empty string');
  }
  const fetchOption: FetchFunction | undefined = options.fetch ?? globalThis.fetch?.bind(globalThis);
  if (typeof fetchOption !== 'function') {
    throw new TypeError('tokenquery client: no global fetch here; pass the fetch option');
  }
  const fetchImpl: FetchFunction = fetchOption;
  const timeoutMs = options.timeoutMs ?? 30_000;
  if (!(Number.isFinite(timeoutMs) && timeoutMs >= 0)) {
    throw new TypeError('tokenquery client: timeoutMs must be a number of milliseconds, 0 for none');
  }
  const maxBytes = options.maxResponseBytes ?? 8 * 1024 * 1024;
  const clientSignal = options.signal;

  /** Removes the API key from any text a server or the network layer produced. */
  const redact = (text: string): string => {
    let out = text.split(apiKey).join('<apikey>');
    const encoded = encodeURIComponent(apiKey);
    if (encoded !== apiKey) out = out.split(encoded).join('<apikey>');
    return out;
  };

  const excerpt = (text: string): string => redact(text.slice(0, EXCERPT_CHARS));

  /** GET `path` and read the whole answer, honouring the timeout, both signals and the size cap. */
  async function get(operation: string, path: string, withKey: boolean, call?: CallOptions): Promise<Answer> {
    const signals = [clientSignal, call?.signal].filter((s): s is AbortSignal => s !== undefined);
    for (const s of signals) s.throwIfAborted();
    const controller = new AbortController();
    const onAbort = function (this: AbortSignal) {
      controller.abort(this.reason);
    };
    for (const s of signals) s.addEventListener('abort', onAbort, { once: true });
    let timedOut = false;
    const timer =
      timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            controller.abort();
          }, timeoutMs)
        : undefined;
    const url = `${baseUrl}${path}${withKey ? `?apikey=${encodeURIComponent(apiKey)}` : ''}`;
    try {
      const response = await fetchImpl(url, {
        method: 'GET',
        // No custom header: in a browser the request stays "simple" (no CORS preflight).
        headers: { accept: 'application/json, text/plain' },
        signal: controller.signal,
        // The key is in the URL: never let a redirect carry it to another address.
        redirect: 'manual',
      });
      const text = await readBody(response, maxBytes, operation, path);
      const answer = { status: response.status, headers: response.headers, text };
      if (response.type === 'opaqueredirect' || (answer.status >= 300 && answer.status < 400)) {
        const location = response.headers.get('location');
        throw responseError(
          operation,
          path,
          answer,
          `the server redirects${location ? ` to ${redact(location)}` : ''}; use the final address as baseUrl`,
        );
      }
      return answer;
    } catch (error) {
      const aborted = signals.find((s) => s.aborted);
      if (aborted) throw aborted.reason;
      if (timedOut) throw new TokenqueryTimeoutError(timeoutMs, { operation, path });
      if (error instanceof TokenqueryClientError) throw error;
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
      const reason = cause instanceof Error ? cause.message : String(cause);
      throw new TokenqueryNetworkError(`${operation}: GET ${path} failed: ${redact(reason)}`, {
        operation,
        path,
        cause: error,
      });
    } finally {
      clearTimeout(timer);
      for (const s of signals) s.removeEventListener('abort', onAbort);
    }
  }

  function responseError(operation: string, path: string, answer: Answer, problem: string, details?: string) {
    return new TokenqueryResponseError(`${operation}: GET ${path}: ${problem}`, {
      operation,
      path,
      httpStatus: answer.status,
      bodyExcerpt: excerpt(answer.text),
      ...(details === undefined ? {} : { details: redact(details) }),
    });
  }

  /**
   * The typed error for an error envelope, or undefined when `body` is not one. An envelope
   * with a numeric `code` other than 1 and a string `msg` is an error whatever the HTTP status.
   */
  function envelopeError(operation: string, path: string, answer: Answer, body: unknown) {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
    const { code, msg } = body as Record<string, unknown>;
    if (typeof code !== 'number' || code === 1 || typeof msg !== 'string') return undefined;
    return apiErrorFor(code, {
      operation,
      path,
      httpStatus: answer.status,
      message: redact(msg),
      retryAfterSeconds: retryAfter(answer.headers.get('retry-after')),
    });
  }

  function parseJson(operation: string, path: string, answer: Answer): unknown {
    try {
      return JSON.parse(answer.text);
    } catch {
      const type = answer.headers.get('content-type') ?? 'no content type';
      throw responseError(operation, path, answer, `HTTP ${answer.status} (${type}) is not JSON`);
    }
  }

  /** An operation whose answer is a Tokenview envelope; returns its `data`, checked. */
  async function envelope<T>(
    operation: string,
    path: string,
    check: Check<T>,
    call: CallOptions | undefined,
  ): Promise<T> {
    const answer = await get(operation, path, true, call);
    const body = parseJson(operation, path, answer);
    const apiError = envelopeError(operation, path, answer, body);
    if (apiError) throw apiError;
    const record = body as Record<string, unknown> | null;
    if (record === null || typeof record !== 'object' || record.code !== 1) {
      throw responseError(operation, path, answer, `HTTP ${answer.status}: not a Tokenview envelope`);
    }
    if (answer.status !== 200) {
      throw responseError(operation, path, answer, `success envelope with HTTP ${answer.status}`);
    }
    try {
      return check(record.data, 'data');
    } catch (error) {
      if (!(error instanceof ShapeError)) throw error;
      throw responseError(operation, path, answer, 'the answer does not follow the contract', error.message);
    }
  }

  /** A supply operation: a bare decimal number as text, or an error envelope. */
  async function bareNumber(operation: string, path: string, call: CallOptions | undefined): Promise<string> {
    const answer = await get(operation, path, true, call);
    // Only the bytes of the number: a line break or spaces around it are tolerated, nothing else.
    const text = answer.text.trim();
    if (answer.status === 200 && isDecimalText(text)) return text;
    if (text.startsWith('{')) {
      const apiError = envelopeError(operation, path, answer, parseJson(operation, path, answer));
      if (apiError) throw apiError;
    }
    throw responseError(
      operation,
      path,
      answer,
      answer.status === 200
        ? 'the body is not an exact decimal number (digits, optionally a point and digits)'
        : `HTTP ${answer.status} without a Tokenview error envelope`,
    );
  }

  const paging = (args: PageOptions | undefined) =>
    `${segment(args?.page ?? 1)}/${segment(args?.size ?? 50)}`;

  const evm: EvmOperations = {
    tokenInfo: async (args) =>
      envelope(
        'evm.tokenInfo',
        `/vipapi/${segment(args.chain)}/token/${segment(args.address)}`,
        evmTokenSummary,
        args,
      ),
    totalSupply: async (args) =>
      bareNumber(
        'evm.totalSupply',
        `/vipapi/token/totalsupply/${segment(args.chain)}/${segment(args.address)}`,
        args,
      ),
    maxSupply: async (args) =>
      bareNumber(
        'evm.maxSupply',
        `/vipapi/token/maxsupply/${segment(args.chain)}/${segment(args.address)}`,
        args,
      ),
    circulatingSupply: async (args) =>
      bareNumber(
        'evm.circulatingSupply',
        `/vipapi/token/circulatingsupply/${segment(args.chain)}/${segment(args.address)}`,
        args,
      ),
    transfers: async (args) =>
      envelope(
        'evm.transfers',
        `/vipapi/${segment(args.chain)}/token/tokentrans/${segment(args.address)}/${paging(args)}`,
        evmTransferList,
        args,
      ),
    tokens: async (args) =>
      envelope('evm.tokens', `/vipapi/${segment(args.chain)}/tokens/${paging(args)}`, evmTokenPage, args),
    addressBalances: async (args) =>
      envelope(
        'evm.addressBalances',
        `/vipapi/${segment(args.chain)}/address/tokenbalance/${segment(args.address)}`,
        evmBalanceList,
        args,
      ),
    addressBalance: async (args) => {
      const path = `/vipapi/${segment(args.chain)}/address/tokenbalance/${segment(args.address)}/${segment(args.token)}`;
      return envelope('evm.addressBalance', path, single(evmBalanceList), args);
    },
    addressTokenTransfers: async (args) =>
      envelope(
        'evm.addressTokenTransfers',
        `/vipapi/${segment(args.chain)}/address/tokentrans/${segment(args.address)}/${segment(args.token)}/${paging(args)}`,
        evmTransferList,
        args,
      ),
    addressTransfers: async (args) =>
      envelope(
        'evm.addressTransfers',
        `/vipapi/${segment(args.chain)}/address/tokentrans/${segment(args.address)}/${paging(args)}`,
        evmTransferList,
        args,
      ),
    holders: async (args) =>
      envelope(
        'evm.holders',
        `/vipapi/${segment(args.chain)}/token/holders/${segment(args.address)}/${paging(args)}`,
        holderPage,
        args,
      ),
  };

  const neo: NeoOperations = {
    tokenInfo: async (args) =>
      envelope('neo.tokenInfo', `/vipapi/neo/token/${segment(args.hash)}`, neoTokenSummary, args),
    totalSupply: async (args) =>
      bareNumber('neo.totalSupply', `/vipapi/token/totalsupply/neo/${segment(args.hash)}`, args),
    maxSupply: async (args) =>
      bareNumber('neo.maxSupply', `/vipapi/token/maxsupply/neo/${segment(args.hash)}`, args),
    transfers: async (args) =>
      envelope(
        'neo.transfers',
        `/vipapi/neo/token/tokentrans/${segment(args.hash)}/${paging(args)}`,
        neoTransferList,
        args,
      ),
    assetInfo: async (args) =>
      envelope('neo.assetInfo', `/vipapi/neo/asset/${segment(args.hash)}`, neoAssetSummary, args),
    assets: async (args) => envelope('neo.assets', `/vipapi/tokens/neo/${paging(args)}`, neoAssetPage, args),
    contracts: async (args) =>
      envelope('neo.contracts', `/vipapi/contracts/neo/${paging(args)}`, neoContractList, args),
    addressBalances: async (args) =>
      envelope(
        'neo.addressBalances',
        `/vipapi/neo/address/tokenbalance/${segment(args.address)}`,
        neoBalanceList,
        args,
      ),
    addressBalance: async (args) =>
      envelope(
        'neo.addressBalance',
        `/vipapi/neo/address/tokenbalance/${segment(args.address)}/${segment(args.hash)}`,
        single(neoBalanceList),
        args,
      ),
    addressTokenTransfers: async (args) =>
      envelope(
        'neo.addressTokenTransfers',
        `/vipapi/neo/address/tokentrans/${segment(args.address)}/${segment(args.hash)}/${paging(args)}`,
        neoTransferList,
        args,
      ),
    addressTransfers: async (args) =>
      envelope(
        'neo.addressTransfers',
        `/vipapi/neo/address/tokentrans/${segment(args.address)}/${paging(args)}`,
        neoTransferList,
        args,
      ),
    holders: async (args) =>
      envelope(
        'neo.holders',
        `/vipapi/neo/token/holders/${segment(args.hash)}/${paging(args)}`,
        holderPage,
        args,
      ),
  };

  const tokenquery: TokenqueryOnlyOperations = {
    async status(call) {
      const operation = 'tokenquery.status';
      const answer = await get(operation, '/status', false, call);
      if (answer.status !== 200) throw responseError(operation, '/status', answer, `HTTP ${answer.status}`);
      const body = parseJson(operation, '/status', answer);
      try {
        return tokenqueryStatus(body, 'body');
      } catch (error) {
        if (!(error instanceof ShapeError)) throw error;
        throw responseError(operation, '/status', answer, 'not a tokenquery status', error.message);
      }
    },
    async healthz(call) {
      const operation = 'tokenquery.healthz';
      const answer = await get(operation, '/healthz', false, call);
      if (answer.status === 200) return true;
      if (answer.status === 503) return false;
      throw responseError(operation, '/healthz', answer, `HTTP ${answer.status}`);
    },
  };

  return { baseUrl, evm, neo, tokenquery };
}

/** The one entry of an array the contract says holds exactly one (Address Token Balance). */
function single<T>(check: Check<T[]>): Check<T> {
  return (value, path) => {
    const list = check(value, path);
    if (list.length !== 1) throw new ShapeError(path, `holds ${list.length} entries, expected exactly 1`);
    return list[0]!;
  };
}

/** `Retry-After` in seconds, when it is given as seconds (an HTTP date is not worth a clock here). */
function retryAfter(header: string | null): number | null {
  if (header === null || !/^[0-9]+$/.test(header.trim())) return null;
  return Number(header.trim());
}

/** The body as text, refusing more than `maxBytes` without buffering it all. */
async function readBody(
  response: Response,
  maxBytes: number,
  operation: string,
  path: string,
): Promise<string> {
  const tooLarge = () =>
    new TokenqueryResponseError(`${operation}: GET ${path}: the answer is larger than ${maxBytes} bytes`, {
      operation,
      path,
      httpStatus: response.status,
      bodyExcerpt: '',
    });
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}
