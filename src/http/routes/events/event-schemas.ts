import { Type } from 'typebox';
import { EVENT_TYPES } from '../../../modules/events/event-types.js';
import { AnyObject, Timestamp } from '../../schemas.js';

/** An event message: the body a webhook delivery carries, and an item of the feed and the stream. */
export const EventMessage = Type.Object(
  {
    id: Type.String({ description: 'The event id (evt_…): x-baas-delivery of its deliveries.' }),
    type: Type.Union(EVENT_TYPES.map((type) => Type.Literal(type))),
    createdAt: Timestamp,
    workspaceId: Type.String(),
    collectionId: Type.String(),
    data: AnyObject({ description: 'record events: {record: {id, data}}; collection events: {collection: {id, name, public, settings}}; schema.updated: {schema: {id, version, state}}.' }),
  },
  { $id: 'EventMessage', title: 'EventMessage' },
);

export const EVENT_ID = /^evt_[0-9a-z]{26}$/;
