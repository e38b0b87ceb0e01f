import type { FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { hasPrefix } from '../ids.js';
import { WORKSPACE_HEADER } from './auth.js';

/**
 * Public collections show anonymous callers their live records and those records' files, never
 * the trash: asking for it (`?trashed=true`), or for a record that is in it, needs a credential.
 */
export const trashNeedsCredential = (): AppError =>
  new AppError('UNAUTHENTICATED', 'The trash is not public: sign in or send an API key to read it.');

/**
 * Where a read route reads from. A caller with credentials reads in its workspace. An anonymous
 * caller reaches only a public collection that is not in the trash, named by id (or by name
 * together with the x-baas-workspace header). A private or missing collection gets the same 401,
 * so anonymous callers cannot probe which collections exist.
 */
export async function readScope(deps: Deps, request: FastifyRequest, idOrName: string): Promise<{ workspaceId: string; collection: string }> {
  if (request.auth.workspaceId) return { workspaceId: request.auth.workspaceId, collection: idOrName };
  const workspaceHeader = request.headers[WORKSPACE_HEADER];
  let query = deps.db.selectFrom('collections').select(['id', 'workspace_id']).where('public', '=', 1).where('trashed_at', 'is', null);
  if (hasPrefix(idOrName, 'col')) query = query.where('id', '=', idOrName);
  else if (typeof workspaceHeader === 'string') query = query.where('workspace_id', '=', workspaceHeader).where('name', '=', idOrName);
  else query = query.where('id', '=', '');
  const row = await query.executeTakeFirst();
  if (!row) throw new AppError('UNAUTHENTICATED', 'This collection is not public: sign in or send an API key.');
  return { workspaceId: row.workspace_id, collection: row.id };
}
