import { Type } from 'typebox';
import type { Deps } from '../../../deps.js';
import { invalidRequest } from '../../../errors.js';
import { placeOfEvent, readFeedPage, type FeedPage } from '../../../modules/events/event-feed.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { decodeCursor, encodeCursor } from '../../cursor.js';
import { listOf, Paging } from '../../schemas.js';
import { sendJson } from '../records/record-json.js';
import { EventChoice, eventFilterFor, EVENTS_ACCESS } from './event-filter.js';
import { EVENT_ID, EventMessage } from './event-schemas.js';

// A cursor holds the direction and the place in the sequence it continues from: "n:42" or "o:42".
const CURSOR = /^[no]:[0-9]{1,15}$/;

export const registerListEvents: RegisterRoute = (app, deps) =>
  app.get('/v1/events', {
    config: { operation: 'events.list', access: EVENTS_ACCESS },
    schema: {
      summary: 'Events of the last 30 days: newest first, or oldest first after a given event',
      description:
        'Each item is the event message, byte for byte the body a webhook delivery of it carries. A caller sees the events of the collections it may read, ' +
        'of the types whose read scope it holds (record.* needs records:read, collection.* collections:read, schema.updated schemas:read). See docs/events.md.',
      tags: ['events'],
      querystring: Type.Object(
        {
          ...EventChoice,
          after: Type.Optional(Type.String({ pattern: EVENT_ID.source, description: 'Oldest first, the events that came after this one (evt_…): to catch up.' })),
          ...Paging,
        },
        { additionalProperties: false },
      ),
      response: { 200: listOf(EventMessage) },
    },
    handler: async (request, reply) => {
      const { limit = 50, cursor, after, ...choice } = request.query;
      const { workspaceId } = inWorkspace(request);
      const filter = await eventFilterFor(deps, request, choice);
      const page = cursor !== undefined ? pageOf(decodeCursor(cursor, (position) => CURSOR.test(position))!) : await firstPage(deps, workspaceId, after);
      // A page ends at `limit` events or PLAINBASE_PAGE_BYTES, whichever comes first.
      const { events: shown, more } = await readFeedPage(deps, workspaceId, filter, { ...page, limit });
      const last = shown.at(-1);
      const next = more && last ? encodeCursor(`${page.direction === 'newest-first' ? 'n' : 'o'}:${last.seq}`) : null;
      // The messages go out as the very text a delivery carries (the schema above documents them).
      return sendJson(reply, `{"data":[${shown.map((event) => event.text).join(',')}],"nextCursor":${JSON.stringify(next)}}`);
    },
  });

function pageOf(position: string): Omit<FeedPage, 'limit'> {
  return { direction: position.startsWith('n') ? 'newest-first' : 'oldest-first', from: Number(position.slice(2)) };
}

async function firstPage(deps: Deps, workspaceId: string, after: string | undefined): Promise<Omit<FeedPage, 'limit'>> {
  if (after === undefined) return { direction: 'newest-first' };
  return { direction: 'oldest-first', from: await placeAfter(deps, workspaceId, after, 'querystring.after') };
}

/** The place in the sequence of an event given to resume after; a 400 when there is no such event to resume from. */
export async function placeAfter(deps: Deps, workspaceId: string, eventId: string, field: string): Promise<number> {
  const place = await placeOfEvent(deps, workspaceId, eventId);
  if (place === null) {
    throw invalidRequest(`No event ${eventId} in this workspace's feed: it may be older than the 30 days events are kept, or not yet in the feed.`, { field });
  }
  return place;
}
