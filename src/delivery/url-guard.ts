import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/**
 * Where webhooks may call (docs/design.md §7): checked when a URL is saved and again at
 * every attempt, on every address the name resolves to. Only globally routable unicast
 * addresses pass; every special range (loopback, private, link-local, unique-local, CGNAT,
 * unspecified, broadcast, multicast, reserved, and IPv4 embedded in IPv6 by mapping, NAT64,
 * 6to4 or Teredo) is refused.
 */
export type BlockReason = 'malformed' | 'scheme' | 'credentials' | 'internal-hostname' | 'private-address' | 'unresolvable';

export class BlockedUrl extends Error {
  constructor(readonly reason: BlockReason, message: string) {
    super(message);
  }
}

export interface GuardOptions {
  /** Development mode allows http:// (docs/design.md §7). */
  allowHttp: boolean;
  /** PLAINBASE_WEBHOOK_ALLOW_PRIVATE=1, for tests: private targets pass. */
  allowPrivate: boolean;
  /** Resolves a name to all its addresses; tests inject one. */
  resolve?: (hostname: string) => Promise<string[]>;
}

export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

// Names that only mean something inside a network. Single-label names (no dot) are internal too.
const INTERNAL_SUFFIXES = ['localhost', 'local', 'internal', 'localdomain', 'lan', 'intranet', 'corp', 'home', 'home.arpa'];

const resolveWithDns = async (hostname: string) => (await dnsLookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/** The checks that need no network: scheme, credentials, names, and address literals. */
export function checkUrlShape(raw: string, options: GuardOptions): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BlockedUrl('malformed', 'The URL is not a valid absolute URL.');
  }
  if (url.protocol !== 'https:' && !(options.allowHttp && url.protocol === 'http:')) {
    throw new BlockedUrl('scheme', options.allowHttp ? 'The URL must use https or http.' : 'The URL must use https.');
  }
  if (url.username || url.password) throw new BlockedUrl('credentials', 'The URL must not contain credentials.');
  const host = hostOf(url);
  if (ipaddr.isValid(host)) {
    if (!options.allowPrivate && !isPublicAddress(host)) throw new BlockedUrl('private-address', 'The URL points to a private or reserved address.');
    return url;
  }
  const name = host.toLowerCase().replace(/\.$/, '');
  const internal = !name.includes('.') || INTERNAL_SUFFIXES.some((suffix) => name === suffix || name.endsWith(`.${suffix}`));
  if (internal && !options.allowPrivate) throw new BlockedUrl('internal-hostname', 'The URL names localhost or an internal host.');
  return url;
}

/** Every address the URL's host resolves to, each checked; the caller connects only to these. */
export async function resolveCheckedAddresses(url: URL, options: GuardOptions): Promise<CheckedAddress[]> {
  const host = hostOf(url);
  let addresses: string[];
  if (ipaddr.isValid(host)) {
    addresses = [host];
  } else {
    try {
      addresses = await (options.resolve ?? resolveWithDns)(host);
    } catch {
      throw new BlockedUrl('unresolvable', 'The URL\'s host name does not resolve.');
    }
    if (addresses.length === 0) throw new BlockedUrl('unresolvable', 'The URL\'s host name does not resolve.');
  }
  // One private answer among public ones is enough to refuse: the resolver may pick it next time.
  if (!options.allowPrivate && addresses.some((address) => !isPublicAddress(address))) {
    throw new BlockedUrl('private-address', 'The URL resolves to a private or reserved address.');
  }
  return addresses.map((address) => ({ address, family: ipaddr.parse(address).kind() === 'ipv6' ? 6 : 4 }));
}

/** Both stages, as done when a webhook is saved and before every attempt. */
export async function checkWebhookUrl(raw: string, options: GuardOptions): Promise<{ url: URL; addresses: CheckedAddress[] }> {
  const url = checkUrlShape(raw, options);
  return { url, addresses: await resolveCheckedAddresses(url, options) };
}

/**
 * Whether an address is globally routable unicast. An IPv6 address that carries an IPv4 address
 * inside it (IPv4-compatible, mapped, SIIT, NAT64, 6to4, Teredo) reaches that IPv4 address, so
 * it is judged by what it carries: `[::7f00:1]` is as private as 127.0.0.1.
 */
export function isPublicAddress(address: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return false;
  }
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const range = parsed.range();
  // :: and ::1 lie inside ::/96 too, but are never anyone's IPv4 address.
  if (range === 'unspecified' || range === 'loopback') return false;
  const carried = embeddedIPv4(parsed as ipaddr.IPv6);
  if (carried) return carried.length > 0 && carried.every((inner) => inner.range() === 'unicast');
  return range === 'unicast';
}

/** The IPv4 addresses an IPv6 address carries, or null for one that carries none. */
export function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] | null {
  const words = address.parts;
  const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  const zeros = (from: number, to: number) => words.slice(from, to).every((word) => word === 0);
  // ::a.b.c.d (IPv4-compatible, deprecated but still routed by some stacks)
  if (zeros(0, 6)) return [v4(words[6]!, words[7]!)];
  // ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (SIIT)
  if (zeros(0, 5) && words[5] === 0xffff) return [v4(words[6]!, words[7]!)];
  if (zeros(0, 4) && words[4] === 0xffff && words[5] === 0) return [v4(words[6]!, words[7]!)];
  // 64:ff9b::/96 (NAT64, well-known prefix) and 64:ff9b:1::/48 (local-use NAT64)
  if (words[0] === 0x64 && words[1] === 0xff9b && (zeros(2, 6) || words[2] === 1)) return [v4(words[6]!, words[7]!)];
  // 2002:aabb:ccdd::/48 (6to4)
  if (words[0] === 0x2002) return [v4(words[1]!, words[2]!)];
  // 2001:0::/32 (Teredo): the server's address, and the client's with every bit flipped
  if (words[0] === 0x2001 && words[1] === 0) return [v4(words[2]!, words[3]!), v4(words[6]! ^ 0xffff, words[7]! ^ 0xffff)];
  return null;
}

/** Whether the URL's host is an address rather than a name: checkUrlShape has checked it then. */
export function isAddressLiteral(url: URL): boolean {
  return ipaddr.isValid(hostOf(url));
}

/** The URL's host without IPv6 brackets. The WHATWG parser has already normalised IPv4 forms (0x7f.1, 2130706433, 0177.0.0.1). */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}
