/**
 * The event names a webhook can subscribe to (docs/design.md §7). Kept apart from the outbox, with no
 * imports, so the dashboard can offer the same list without pulling in database code.
 */
export const EVENT_TYPES = [
  'record.created',
  'record.updated',
  'record.deleted',
  'record.restored',
  'collection.created',
  'collection.updated',
  'collection.deleted',
  'collection.restored',
  'schema.updated',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
