import ipaddr from 'ipaddr.js';

/**
 * The part of a client's address that per-address limits count by. An IPv4 address is itself.
 * An IPv6 address is its /64 prefix: one household, office or server is routinely handed a
 * whole /64, so counting each of its 2^64 addresses apart would let one client pose as endless
 * others. An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, what a dual-stack socket reports for
 * an IPv4 client) is the IPv4 address it carries. Text that is no address at all is kept as it
 * is, so nothing falls together by accident.
 */
export function addressKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const prefix = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${prefix.join(':')}::/64`;
}
