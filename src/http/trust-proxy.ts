import type { FastifyServerOptions } from 'fastify';
import type { TrustProxy } from '../config.js';

/**
 * Fastify's trustProxy option for PLAINBASE_TRUST_PROXY. A number of proxies goes in as a
 * function that trusts the nearest `hops` addresses, the hop-count rule of proxy-addr: Fastify 5
 * takes a bare number as trusting nobody (it cannot tell a proxy from a client that connects
 * directly), so this setting says so in docs/operations.md instead: use a count only where the
 * service cannot be reached but through those proxies.
 */
export function trustProxyOption(setting: TrustProxy): FastifyServerOptions['trustProxy'] {
  if (typeof setting === 'boolean') return setting;
  if ('hops' in setting) return (_address: string, hop: number) => hop < setting.hops;
  return setting.addresses;
}
