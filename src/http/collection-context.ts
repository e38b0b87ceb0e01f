import type { FastifyRequest } from 'fastify';
import type { CollectionContext } from '../modules/collections/collections.js';
import { inWorkspace } from './auth.js';
import { requestMeta } from './request-meta.js';

/** Who is changing a collection's contents, and from where: what every data service needs. */
export function collectionContext(request: FastifyRequest): CollectionContext {
  const { workspaceId, actor } = inWorkspace(request);
  return { workspaceId, actor, meta: requestMeta(request) };
}
