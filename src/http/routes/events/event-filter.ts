import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Scope } from '../../../abilities.js';
import type { Deps } from '../../../deps.js';
import { AppError, invalidRequest } from '../../../errors.js';
import { findCollection } from '../../../modules/collections/collections.js';
import type { EventFilter } from '../../../modules/events/event-feed.js';
import { EVENT_TYPES, type EventType } from '../../../modules/events/event-types.js';
import { needs } from '../../access.js';
import { callerMay, inWorkspace } from '../../auth.js';

/** The read scope an event type needs: a caller sees an event only if it may read what changed. */
const READ_SCOPE: Record<EventType, Scope> = {
  'record.created': 'records:read',
  'record.updated': 'records:read',
  'record.deleted': 'records:read',
  'record.restored': 'records:read',
  'collection.created': 'collections:read',
  'collection.updated': 'collections:read',
  'collection.deleted': 'collections:read',
  'collection.restored': 'collections:read',
  'schema.updated': 'schemas:read',
};

/**
 * Who may read events at all: collections:read, which every role holds and, by rule 1 of
 * docs/design.md §4, every key with a record, schema or file scope. What each caller then sees
 * is narrowed by eventFilterFor.
 */
export const EVENTS_ACCESS = needs('collections:read');

/** The query fields that choose events, shared by the feed and the stream. */
export const EventChoice = {
  types: Type.Optional(Type.String({ maxLength: 500, description: `Comma list of event types, like record.created,record.updated. Default: every type the caller may read (${EVENT_TYPES.join(', ')}).` })),
  collections: Type.Optional(Type.String({ maxLength: 4000, description: 'Comma list of collection ids or names. Default: every collection the caller may read.' })),
};

/**
 * The events a caller may see, narrowed to what it asked for: types whose read scope it holds
 * (a type asked for by name without it is 403 MISSING_SCOPE), inside its key's collection
 * restriction (a collection outside it asked for by name is 403 COLLECTION_NOT_ALLOWED). Called
 * again on an open stream, it follows the caller's abilities as they are now.
 */
export async function eventFilterFor(deps: Deps, request: FastifyRequest, asked: { types?: string; collections?: string }): Promise<EventFilter> {
  const { workspaceId } = inWorkspace(request);
  const askedTypes = asked.types === undefined ? null : commaList(asked.types, 'querystring.types');
  for (const type of askedTypes ?? []) {
    if (!Object.hasOwn(READ_SCOPE, type)) throw invalidRequest(`Unknown event type ${type}; see the list of events in the docs.`, { field: 'querystring.types', unknown: type });
  }
  const types = new Set<EventType>();
  for (const type of (askedTypes ?? EVENT_TYPES) as EventType[]) {
    const scope = READ_SCOPE[type];
    if (callerMay(request, scope)) types.add(type);
    else if (askedTypes) throw new AppError('MISSING_SCOPE', `Reading ${type} events needs the scope ${scope}.`, { requiredScope: scope });
  }
  if (types.size === 0) throw new AppError('MISSING_SCOPE', 'Reading events needs a read scope: records:read, collections:read or schemas:read.', { requiredScope: 'records:read' });

  const restriction = request.auth.key?.collections ?? null;
  if (asked.collections === undefined) return { types, collections: restriction ? new Set(restriction) : null };
  const collections = new Set<string>();
  for (const ref of commaList(asked.collections, 'querystring.collections')) {
    // A collection in the trash still has events to read.
    const row = await findCollection(deps.db, workspaceId, ref, { includeTrashed: true }).catch((error: unknown) => {
      if (error instanceof AppError && error.code === 'NOT_FOUND') throw invalidRequest(`No collection ${ref} in this workspace.`, { field: 'querystring.collections' });
      throw error;
    });
    if (restriction && !restriction.includes(row.id)) throw new AppError('COLLECTION_NOT_ALLOWED', 'This key is restricted to other collections.', { collectionId: row.id });
    collections.add(row.id);
  }
  return { types, collections };
}

function commaList(value: string, field: string): string[] {
  const items = value.split(',').map((item) => item.trim());
  if (items.some((item) => item === '')) throw invalidRequest('Give a comma list with no empty items.', { field });
  return items;
}
