/**
 * IP allow-lists of API keys: CIDR parsing (IPv4 and IPv6) into one canonical text form, and a
 * matcher cheap enough for every request of a listed key.
 *
 * Every address is held as eight 16-bit groups; an IPv4 address is its IPv4-mapped IPv6 form
 * (`::ffff:a.b.c.d`), so one comparison serves both families and a dual-stack socket's
 * `::ffff:10.0.0.1` matches `10.0.0.0/8`. (`net.BlockList` does the same but is slower: it parses
 * the address into a native object on every check.)
 */
import { UserError } from './errors.js';

/** Eight 16-bit groups, most significant first. */
type Groups = number[];

interface Cidr {
  groups: Groups;
  /** Prefix length over all 128 bits (an IPv4 /8 is /104 here). */
  prefix: number;
}

/**
 * Parses strict dotted-quad IPv4 from `text[from..]` (no leading zeros, which some tools read as
 * octal) into two groups at `into[at]`.
 */
function parseIpv4(text: string, from: number, into: Groups, at: number): boolean {
  let part = 0;
  let digits = 0;
  let parts = 0;
  let value = 0;
  for (let i = from; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 46; // a final '.' closes the last part
    if (c >= 48 && c <= 57) {
      if (digits > 0 && part === 0) return false; // leading zero
      part = part * 10 + (c - 48);
      if (++digits > 3 || part > 255) return false;
    } else if (c === 46) {
      if (digits === 0 || parts === 4) return false;
      value = value * 256 + part;
      parts++;
      part = 0;
      digits = 0;
    } else {
      return false;
    }
  }
  if (parts !== 4) return false;
  into[at] = Math.floor(value / 65536);
  into[at + 1] = value % 65536;
  return true;
}

/** The value of a hex digit, or -1. */
function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/**
 * Parses IPv6 text (with one `::` and an optional embedded IPv4 tail) into eight groups. One pass
 * over the characters, no allocation: this runs on every request of an allow-listed key.
 */
function parseIpv6(text: string, into: Groups): boolean {
  const length = text.length;
  let n = 0; // groups written
  let gap = -1; // where `::` stands, in groups
  let i = 0;
  if (length >= 2 && text.charCodeAt(0) === 58) {
    if (text.charCodeAt(1) !== 58) return false;
    gap = 0;
    i = 2;
  }
  while (i < length) {
    if (n === 8) return false;
    const start = i;
    let value = 0;
    let digits = 0;
    for (; i < length; i++) {
      const d = hexDigit(text.charCodeAt(i));
      if (d < 0) break;
      value = value * 16 + d;
      if (++digits > 4) return false;
    }
    if (i < length && text.charCodeAt(i) === 46) {
      // An IPv4 tail ends the address.
      if (n > 6 || !parseIpv4(text, start, into, n)) return false;
      n += 2;
      break;
    }
    if (digits === 0) return false;
    into[n++] = value;
    if (i === length) break;
    if (text.charCodeAt(i) !== 58) return false;
    i++;
    if (i < length && text.charCodeAt(i) === 58) {
      if (gap !== -1) return false;
      gap = n;
      i++;
    } else if (i === length) {
      return false; // a single trailing colon
    }
  }
  if (gap === -1) return n === 8;
  if (n > 7) return false;
  // Right-align the groups after `::`; the gap is zeros.
  const tail = n - gap;
  for (let k = tail - 1; k >= 0; k--) into[8 - tail + k] = into[gap + k]!;
  for (let k = gap; k < 8 - tail; k++) into[k] = 0;
  return true;
}

/** Any IP text (IPv4, IPv6, IPv4-mapped) as groups; `%zone` suffixes are ignored. */
function parseAddress(text: string, into: Groups): boolean {
  if (text.indexOf(':') === -1) {
    into[0] = into[1] = into[2] = into[3] = into[4] = 0;
    into[5] = 0xffff;
    return parseIpv4(text, 0, into, 6);
  }
  const zone = text.indexOf('%');
  return parseIpv6(zone === -1 ? text : text.slice(0, zone), into);
}

const isMapped = (g: Groups): boolean =>
  g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff;

/** True when the first `prefix` bits of `a` and `b` agree. */
function samePrefix(a: Groups, b: Groups, prefix: number): boolean {
  let i = 0;
  for (; prefix >= 16; prefix -= 16, i++) if (a[i] !== b[i]) return false;
  if (prefix === 0) return true;
  const mask = (0xffff << (16 - prefix)) & 0xffff;
  return ((a[i]! ^ b[i]!) & mask) === 0;
}

/** RFC 5952 text: lower case, no leading zeros, the longest run of two or more zero groups as `::`. */
function formatIpv6(g: Groups): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = g.map((n) => n.toString(16));
  if (bestStart === -1) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

function parseCidrParts(text: string): Cidr {
  const value = text.trim();
  const slash = value.indexOf('/');
  const addressText = slash === -1 ? value : value.slice(0, slash);
  const groups: Groups = new Array<number>(8).fill(0);
  if (addressText.includes('%') || !parseAddress(addressText, groups)) {
    throw new UserError(`"${value}" is not an IP address or CIDR (e.g. 203.0.113.0/24, 2001:db8::/32)`);
  }
  const v4 = !addressText.includes(':');
  const bits = v4 ? 32 : 128;
  let prefix = bits;
  if (slash !== -1) {
    const prefixText = value.slice(slash + 1);
    if (!/^[0-9]{1,3}$/.test(prefixText) || Number(prefixText) > bits) {
      throw new UserError(`"${value}": the prefix length must be 0..${bits}`);
    }
    prefix = Number(prefixText);
  }
  if (v4) prefix += 96;
  // Host bits set (10.1.2.3/8) is nearly always a typo for something else: say what the network is.
  const network = groups.map((group, i) => {
    const keep = Math.max(0, Math.min(16, prefix - i * 16));
    return keep === 0 ? 0 : group & ((0xffff << (16 - keep)) & 0xffff);
  });
  if (network.some((group, i) => group !== groups[i])) {
    throw new UserError(
      `"${value}" has host bits set; the network is ${formatCidr({ groups: network, prefix })}`,
    );
  }
  return { groups, prefix };
}

function formatCidr({ groups, prefix }: Cidr): string {
  if (prefix >= 96 && isMapped(groups)) {
    const a = groups[6]!;
    const b = groups[7]!;
    return `${a >> 8}.${a & 0xff}.${b >> 8}.${b & 0xff}/${prefix - 96}`;
  }
  return `${formatIpv6(groups)}/${prefix}`;
}

/**
 * The canonical text of a CIDR or a bare address (`10.0.0.0/8`, `2001:db8::/32`, `192.0.2.7/32`):
 * what the store keeps. IPv4-mapped IPv6 networks are written as IPv4. Throws `UserError` for
 * anything else, including host bits set beyond the prefix.
 */
export function canonicalCidr(text: string): string {
  return formatCidr(parseCidrParts(text));
}

/**
 * Ranges that hold no public address: loopback, private (RFC 1918), shared (RFC 6598), link-local
 * and unique-local. A range inside one of them is never too wide to trust as proxies.
 */
const NON_PUBLIC = [
  '127.0.0.0/8',
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '100.64.0.0/10',
  '169.254.0.0/16',
  '::1/128',
  'fc00::/7',
  'fe80::/10',
].map(parseCidrParts);

/** `::ffff:0:0/96`: every IPv4 address as a dual-stack socket reports it. */
const MAPPED: Groups = [0, 0, 0, 0, 0, 0xffff, 0, 0];

/** The widest public ranges `isWidePublicRange` lets through, over all 128 bits: an IPv4 /8, an IPv6 /16. */
const WIDEST_IPV4 = 96 + 8;
const WIDEST_IPV6 = 16;

/**
 * Whether a CIDR (as `canonicalCidr` accepts it) reaches public space wider than an IPv4 /8 or an
 * IPv6 /16 and lies in no non-public range: trusting it as proxies would let anyone there forge
 * `X-Forwarded-For`. An IPv6 range that holds the IPv4-mapped block (`::/80`, `::/0`) counts as
 * 0.0.0.0/0, since it holds every IPv4 client. Throws `UserError` as `canonicalCidr` does.
 */
export function isWidePublicRange(text: string): boolean {
  const { groups, prefix } = parseCidrParts(text);
  const inside = (block: Cidr) => prefix >= block.prefix && samePrefix(groups, block.groups, block.prefix);
  if (NON_PUBLIC.some(inside)) return false;
  if (samePrefix(groups, MAPPED, Math.min(prefix, 96))) return prefix < WIDEST_IPV4;
  return prefix < WIDEST_IPV6;
}

/** A compiled allow-list. */
export interface IpAllowList {
  /** True when `ip` (a socket or forwarded address, IPv4 or IPv6) lies in one of the networks. Never throws. */
  allows(ip: string): boolean;
  /** The networks, canonical. */
  readonly cidrs: readonly string[];
}

/**
 * Compiles CIDRs (as `canonicalCidr` accepts them). An entry that does not parse matches nothing,
 * so a damaged stored list refuses rather than admits.
 */
export function createIpAllowList(cidrs: readonly string[]): IpAllowList {
  const networks: Cidr[] = [];
  for (const text of cidrs) {
    try {
      networks.push(parseCidrParts(text));
    } catch {
      // Matches nothing (see above).
    }
  }
  const scratch: Groups = new Array<number>(8).fill(0);
  return {
    cidrs: networks.map(formatCidr),
    allows(ip) {
      if (!parseAddress(ip, scratch)) return false;
      for (const network of networks) if (samePrefix(scratch, network.groups, network.prefix)) return true;
      return false;
    },
  };
}

/**
 * The network a client address stands for when requests are counted per client: an IPv4
 * address itself (also when it reaches an IPv6 socket as `::ffff:a.b.c.d`), an IPv6 address's
 * /64, which one subscriber usually holds whole (counting single addresses of it would give
 * one client 2^64 buckets). Text that is no address is returned as it is.
 */
export function clientNetwork(ip: string): string {
  const g: Groups = new Array<number>(8).fill(0);
  if (!parseAddress(ip, g)) return ip;
  if (isMapped(g)) return `${g[6]! >> 8}.${g[6]! & 0xff}.${g[7]! >> 8}.${g[7]! & 0xff}`;
  return formatCidr({ groups: [g[0]!, g[1]!, g[2]!, g[3]!, 0, 0, 0, 0], prefix: 64 });
}
