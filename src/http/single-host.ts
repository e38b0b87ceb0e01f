import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { invalidRequest } from '../errors.js';

/**
 * A request with more than one Host header is refused (RFC 9112 §3.2 requires a 400). Node keeps
 * only the first in `request.headers`, while a proxy or cache in front may have used another:
 * the two would disagree about which site the request is for, the start of cache poisoning and
 * of links built for the wrong host. Only the raw header list shows the second.
 */
export function refuseRepeatedHost(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const raw = request.raw.rawHeaders;
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') hosts++;
  }
  done(hosts > 1 ? invalidRequest('The request has more than one Host header; send exactly one.', { field: 'headers.host' }) : undefined);
}
