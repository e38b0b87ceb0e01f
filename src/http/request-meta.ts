import type { FastifyRequest } from 'fastify';
import type { RequestMeta } from '../modules/audit/audit.js';

export function requestMeta(request: FastifyRequest): RequestMeta {
  const userAgent = request.headers['user-agent'];
  return { ip: request.ip ?? null, userAgent: userAgent ? userAgent.slice(0, 512) : null, requestId: request.id };
}
