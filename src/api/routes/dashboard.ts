/**
 * The status dashboard at `/`, for an operator: each chain's progress and lag, a throughput
 * chart, top tokens by holders and the newest transfers, refreshed live from `/dashboard/data`.
 *
 * It needs no API key, so it shows nothing a key protects. A key protects questions: any
 * token's record, any token's full transfer history, every page of the token list, any supply.
 * The dashboard asks none the visitor chooses (it takes no parameters), and shows only:
 * - progress and throughput, which `/status` shows too, with each chain's last error as a class
 *   only (`rpc unreachable`, ...), as anonymous `/status` shows it;
 * - the top 10 tokens of each chain by holders (symbol, holder and transfer counts), the first
 *   lines of what every explorer's front page shows, each with its top 10 holders (shortened
 *   addresses, amounts and shares of the supply), as every explorer's token page shows them;
 * - the newest transfers of each chain (at most 10), with shortened addresses and hashes
 *   (`0x1234…abcd`): enough to see data flowing, not to look anything up or to mirror the index.
 * Its data is built at most once a second, however many visitors poll, so the public endpoint
 * costs the store the same whatever its traffic.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { formatUnits } from '../../internal/amount.js';
import { familyOf } from '../../internal/chains.js';
import { errorClassOf, errorMessage } from '../../internal/errors.js';
import type { NeoTokenRecord, TokenRecord, TransferRecord } from '../../store/types.js';
import type { ChainFigures, ChainProgressTracker } from '../chain-progress.js';
import { DASHBOARD_CSS, DASHBOARD_JS, DASHBOARD_PAGE } from '../dashboard-page.js';
import { JSON_CONTENT_TYPE } from '../envelope.js';
import { serverBusy } from '../errors.js';
import { holderPercentage } from '../holder-views.js';
import { neoBalanceUnits } from '../neo-views.js';
import { pathParams, type RouteContext, registerOperation } from '../routing.js';

/** Rows of each list the dashboard shows. */
export const DASHBOARD_TOP_TOKENS = 10;
export const DASHBOARD_RECENT_TRANSFERS = 10;
export const DASHBOARD_TOP_HOLDERS = 10;
/** The data is rebuilt at most this often. */
const DATA_MAX_AGE_MS = 1000;
/** Untrusted names and symbols are cut to this length. */
const MAX_TEXT = 32;

/** `/dashboard/data`. */
export interface DashboardData {
  /** Unix ms when this answer was built. */
  generatedAt: number;
  chains: ChainFigures[];
  /** Rates over the last 10 minutes: `times` in Unix seconds, each chain's series beside them. */
  throughput: {
    times: number[];
    chains: Record<string, { blocksPerSecond: number[]; transfersPerSecond: (number | null)[] }>;
  };
  topTokens: Record<string, DashboardToken[]>;
  recentTransfers: Record<string, DashboardTransfer[]>;
  store: { kind: string; bytes: number | null };
}

export interface DashboardToken {
  /** Contract address or asset id, shortened. */
  token: string;
  symbol: string;
  name: string;
  holders: number;
  transfers: number;
  /** Its largest holders, largest first (at most {@link DASHBOARD_TOP_HOLDERS}). */
  topHolders: DashboardHolder[];
}

export interface DashboardHolder {
  /** Shortened. */
  address: string;
  /** Decimal-adjusted balance. */
  amount: string;
  /** Share of the total supply in percent (as Token Holders' `percentage`); null when the supply is unknown. */
  percentage: string | null;
}

export interface DashboardTransfer {
  block: number;
  /** Unix seconds. */
  time: number;
  /** Contract address or asset id, shortened. */
  token: string;
  symbol: string;
  /** Decimal-adjusted amount. */
  amount: string;
  /** Shortened; `""` for a mint (from) or a burn (to) on NEO. */
  from: string;
  to: string;
  /** Transaction hash, shortened. */
  tx: string;
}

/** `0x1234…abcd`: an identifier reduced to what a person reads at a glance. */
export function shorten(id: string): string {
  return id.length <= 12 ? id : `${id.slice(0, 6)}…${id.slice(-4)}`;
}

function clip(text: string): string {
  return text.length <= MAX_TEXT ? text : `${text.slice(0, MAX_TEXT - 1)}…`;
}

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface Asset {
  type: string;
  body: Buffer;
  gzipped: Buffer;
  etag: string;
}

function asset(type: string, body: Buffer): Asset {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  return { type, body, gzipped: gzipSync(body), etag };
}

/** uPlot's browser build and stylesheet, from its npm package (no CDN). */
function uplotFile(name: string): Buffer {
  const require = createRequire(import.meta.url);
  return readFileSync(require.resolve(`uplot/dist/${name}`));
}

export function dashboardRoutes(
  app: FastifyInstance,
  ctx: RouteContext,
  progress: ChainProgressTracker,
): void {
  const page = asset('text/html; charset=utf-8', Buffer.from(DASHBOARD_PAGE));
  // Read when first asked for: a server whose dashboard nobody opens never reads them.
  let assets: Map<string, Asset> | undefined;
  const assetNamed = (name: string): Asset | undefined => {
    assets ??= new Map([
      ['dashboard.js', asset('text/javascript; charset=utf-8', Buffer.from(DASHBOARD_JS))],
      ['dashboard.css', asset('text/css; charset=utf-8', Buffer.from(DASHBOARD_CSS))],
      ['uplot.js', asset('text/javascript; charset=utf-8', uplotFile('uPlot.iife.min.js'))],
      ['uplot.css', asset('text/css; charset=utf-8', uplotFile('uPlot.min.css'))],
    ]);
    return assets.get(name);
  };
  const data = createDataCache(ctx, progress);

  registerOperation(app, ctx, {
    url: '/',
    auth: false,
    async handler(request, reply) {
      reply.header('content-security-policy', CSP);
      return sendAsset(request, reply, page);
    },
  });

  registerOperation(app, ctx, {
    url: '/dashboard/assets/:name',
    auth: false,
    async handler(request, reply) {
      const found = assetNamed(pathParams<'name'>(request).name);
      if (found === undefined) {
        reply.callNotFound();
        return reply;
      }
      return sendAsset(request, reply, found);
    },
  });

  registerOperation(app, ctx, {
    url: '/dashboard/data',
    auth: false,
    async handler(request, reply) {
      let body: string;
      try {
        body = await data();
      } catch (error) {
        request.log.error({ err: errorMessage(error) }, 'dashboard data failed');
        throw serverBusy();
      }
      return reply.code(200).type(JSON_CONTENT_TYPE).header('cache-control', 'no-store').send(body);
    },
  });
}

async function sendAsset(request: FastifyRequest, reply: FastifyReply, file: Asset): Promise<FastifyReply> {
  const gzip = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
  const etag = gzip ? `${file.etag.slice(0, -1)}-gz"` : file.etag;
  reply.header('etag', etag).header('cache-control', 'no-cache').header('vary', 'accept-encoding');
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  reply.code(200).type(file.type);
  if (gzip) reply.header('content-encoding', 'gzip');
  return reply.send(gzip ? file.gzipped : file.body);
}

/** The data as JSON text, rebuilt at most once per {@link DATA_MAX_AGE_MS}; concurrent requests share one build. */
function createDataCache(ctx: RouteContext, progress: ChainProgressTracker): () => Promise<string> {
  let cached: { at: number; body: string } | null = null;
  let building: Promise<string> | null = null;
  return () => {
    if (cached !== null && Date.now() - cached.at < DATA_MAX_AGE_MS) return Promise.resolve(cached.body);
    building ??= buildData(ctx, progress)
      .then((answer) => {
        const body = JSON.stringify(answer);
        cached = { at: Date.now(), body };
        return body;
      })
      .finally(() => {
        building = null;
      });
    return building;
  };
}

async function buildData(ctx: RouteContext, progress: ChainProgressTracker): Promise<DashboardData> {
  const chains = progress
    .current()
    .map((c) => (c.lastError === null ? c : { ...c, lastError: errorClassOf(c.lastError) }));
  const history = progress.history();
  const lists = await Promise.all(
    chains.map(async ({ chain }) => {
      const neo = familyOf(chain)?.name === 'neo';
      const page = neo
        ? await ctx.store.neo.listNeoTokens(chain, 0, DASHBOARD_TOP_TOKENS)
        : await ctx.store.reader.listTokens(chain, 0, DASHBOARD_TOP_TOKENS);
      const tokens: DashboardToken[] = await Promise.all(
        page.tokens.map(async (t) => ({
          token: shorten(t.address),
          symbol: clip(t.symbol),
          name: clip(t.name),
          holders: t.holderCount,
          transfers: t.transferCount,
          topHolders: await topHolders(ctx, chain, t, neo),
        })),
      );
      const recent = progress.recent(chain).slice(0, DASHBOARD_RECENT_TRANSFERS);
      return { chain, tokens, transfers: await describeTransfers(ctx, chain, recent) };
    }),
  );
  // In the chains' order, whichever read finished first.
  const topTokens = Object.fromEntries(lists.map((l) => [l.chain, l.tokens]));
  const recentTransfers = Object.fromEntries(lists.map((l) => [l.chain, l.transfers]));
  return {
    generatedAt: Date.now(),
    chains,
    throughput: {
      times: history.times.map((t) => Math.round(t / 1000)),
      chains: history.chains,
    },
    topTokens,
    recentTransfers,
    store: { kind: ctx.store.kind, bytes: progress.storageBytes() },
  };
}

/** A token's largest holders, as Token Holders' first page shows them, with shortened addresses. */
async function topHolders(
  ctx: RouteContext,
  chain: string,
  token: TokenRecord,
  neo: boolean,
): Promise<DashboardHolder[]> {
  const holders = await ctx.store.reader.listHolders(chain, token.address, 0, DASHBOARD_TOP_HOLDERS);
  return holders.map((h) => {
    // NEO global assets: from the store's Fixed8 sums to the asset's unit, that of `decimals` and the supply.
    const units = neo ? neoBalanceUnits(token as NeoTokenRecord, h.balance) : h.balance;
    return {
      address: shorten(h.address),
      amount: formatUnits(units, token.decimals),
      percentage: holderPercentage(units, token.totalSupply),
    };
  });
}

async function describeTransfers(
  ctx: RouteContext,
  chain: string,
  transfers: readonly TransferRecord[],
): Promise<DashboardTransfer[]> {
  const tokens = new Map<string, TokenRecord | null>();
  for (const t of transfers) {
    if (!tokens.has(t.token)) tokens.set(t.token, await ctx.store.reader.getToken(chain, t.token));
  }
  return transfers.map((t) => {
    const token = tokens.get(t.token) ?? null;
    return {
      block: t.blockNumber,
      time: t.time,
      token: shorten(t.token),
      symbol: clip(token?.symbol ?? ''),
      amount: token === null ? t.value.toString() : formatUnits(t.value, token.decimals),
      from: shorten(t.from),
      to: shorten(t.to),
      tx: shorten(t.txHash),
    };
  });
}
