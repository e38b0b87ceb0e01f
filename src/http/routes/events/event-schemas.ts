import { Type } from 'typebox';
import { EVENT_TYPES } from '../../../modules/events/event-types.js';
import { AnyObject, EXAMPLE_TIME, exampleId, StringEnum, Timestamp } from '../../schemas.js';

export const EVENT_EXAMPLE = {
  id: exampleId('evt'),
  type: 'record.created',
  createdAt: EXAMPLE_TIME,
  workspaceId: exampleId('ws'),
  collectionId: exampleId('col'),
  data: { record: { id: exampleId('rec'), data: { name: 'Ada Lovelace', email: 'ada@example.com', age: 36 } } },
};

/** An event message: the body a webhook delivery carries, and an item of the feed and the stream. */
export const EventMessage = Type.Object(
  {
    id: Type.String({ description: 'The event id (evt_…): x-baas-delivery of its deliveries.' }),
    type: StringEnum(EVENT_TYPES),
    createdAt: Timestamp,
    workspaceId: Type.String(),
    collectionId: Type.String(),
    data: AnyObject({ description: 'record events: {record: {id, data}}; collection events: {collection: {id, name, public, settings}}; schema.updated: {schema: {id, version, state}}.' }),
  },
  { $id: 'EventMessage', title: 'EventMessage', examples: [EVENT_EXAMPLE] },
);

export const EVENT_ID = /^evt_[0-9a-z]{26}$/;
