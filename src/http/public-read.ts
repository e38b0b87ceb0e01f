import type { FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { AppError, invalidRequest } from '../errors.js';
import { hasPrefix } from '../ids.js';
import { findPublicCollection } from '../modules/collections/collections.js';
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
  let ref: { id: string } | { workspaceId: string; name: string };
  if (hasPrefix(idOrName, 'col')) ref = { id: idOrName };
  else if (typeof workspaceHeader === 'string' && workspaceHeader !== '') ref = { workspaceId: workspaceHeader, name: idOrName };
  else throw nameNeedsWorkspace();
  const found = await findPublicCollection(deps.db, ref);
  if (!found) throw new AppError('UNAUTHENTICATED', 'No public collection answers to this id or name: to read a private one, sign in or send an API key.');
  // The answer may be kept by shared caches, apart for each workspace and credential (cache-headers.ts).
  request.publicRead = true;
  return { workspaceId: found.workspaceId, collection: found.id };
}

/**
 * A name means something only inside a workspace, and an anonymous request names none: the
 * request itself is incomplete (400, like a session request without the header), whatever
 * collections exist. It is answered before any lookup, so it tells nothing about them either.
 */
function nameNeedsWorkspace(): AppError {
  return invalidRequest(
    `A collection name needs its workspace: send the ${WORKSPACE_HEADER} header (ws_…) with it, or name the collection by its id (col_…). ` +
      'A collection that is not public also needs an API key or a session.',
    { field: `headers.${WORKSPACE_HEADER}`, header: WORKSPACE_HEADER },
  );
}
