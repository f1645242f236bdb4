/**
 * Rate limits as operators write them (`10/s`, `600/min`, `unlimited`) and as the limiters and
 * the store hold them: a token bucket refilled at `perSecond` holding at most `burst` requests.
 */
import { UserError } from './errors.js';

/** A token bucket: `burst` requests at once, then `perSecond` more each second. */
export interface RateLimit {
  /** Tokens added per second; may be fractional (`1/min` is 1/60). Finite and positive. */
  perSecond: number;
  /** Capacity of the bucket: the most requests allowed at once. A positive integer. */
  burst: number;
}

/** Highest rate accepted: far above what one server answers, so only typos are refused. */
const MAX_PER_SECOND = 1_000_000;
/** Lowest rate accepted: one request a day. */
const MIN_PER_SECOND = 1 / 86_400;
const MAX_BURST = 1_000_000_000;

const PERIODS: Record<string, number> = { s: 1, sec: 1, m: 60, min: 60, h: 3600, hour: 3600 };

/**
 * Parses `<n>`, `<n>/s`, `<n>/min` or `<n>/h` (n a positive decimal) into requests per second,
 * or `unlimited`. `from` names the flag or variable in the error.
 */
export function parseRate(text: string, from: string): number | 'unlimited' {
  const value = text.trim().toLowerCase();
  if (value === 'unlimited') return 'unlimited';
  const match = /^([0-9]+(?:\.[0-9]+)?)(?:\/(s|sec|m|min|h|hour))?$/.exec(value);
  if (match === null) {
    throw new UserError(`${from} must look like 10/s, 600/min, 3600/h or unlimited, got "${text}"`);
  }
  const perSecond = Number(match[1]) / PERIODS[match[2] ?? 's']!;
  if (!(perSecond >= MIN_PER_SECOND && perSecond <= MAX_PER_SECOND)) {
    throw new UserError(`${from} must be between 1/day and ${MAX_PER_SECOND}/s, got "${text}"`);
  }
  return perSecond;
}

/** Parses a burst (bucket capacity): a whole number ≥ 1. */
export function parseBurst(text: string, from: string): number {
  const value = text.trim();
  if (!/^[0-9]+$/.test(value) || Number(value) < 1 || Number(value) > MAX_BURST) {
    throw new UserError(`${from} must be a whole number between 1 and ${MAX_BURST}, got "${text}"`);
  }
  return Number(value);
}

/** The burst when none is given: one second's worth of requests, at least 1. */
export function defaultBurst(perSecond: number): number {
  return Math.max(1, Math.ceil(perSecond));
}

/** A rate as people read it: `10/s`, `600/min`, `1/h`, else requests per second with 6 significant digits. */
export function formatRate(perSecond: number): string {
  const whole = (n: number) => Math.abs(n - Math.round(n)) < 1e-9 && Math.round(n) > 0;
  if (whole(perSecond)) return `${Math.round(perSecond)}/s`;
  if (whole(perSecond * 60)) return `${Math.round(perSecond * 60)}/min`;
  if (whole(perSecond * 3600)) return `${Math.round(perSecond * 3600)}/h`;
  return `${replenishRateText(perSecond)}/s`;
}

/** `X-RateLimit-Replenish-Rate`: requests per second as a plain decimal (`10`, `0.5`, `0.0166667`). */
export function replenishRateText(perSecond: number): string {
  return String(Number(perSecond.toPrecision(6)));
}

/** `10/s burst 20`, or `unlimited`. */
export function formatRateLimit(limit: RateLimit | 'unlimited'): string {
  return limit === 'unlimited' ? 'unlimited' : `${formatRate(limit.perSecond)} burst ${limit.burst}`;
}

/** True for a limit the store and the limiters accept (what the parsers above produce). */
export function isValidRateLimit(limit: RateLimit): boolean {
  return (
    Number.isFinite(limit.perSecond) &&
    limit.perSecond >= MIN_PER_SECOND &&
    limit.perSecond <= MAX_PER_SECOND &&
    Number.isInteger(limit.burst) &&
    limit.burst >= 1 &&
    limit.burst <= MAX_BURST
  );
}
