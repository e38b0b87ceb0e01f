import { Type } from 'typebox';
import { getDelivery, listDeliveries, replayDelivery } from '../../../modules/webhooks/deliveries.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { decodeCursor, idPosition, page } from '../../cursor.js';
import { listOf, Paging } from '../../schemas.js';
import { EVENT_EXAMPLE } from '../events/event-schemas.js';
import { Attempt, ATTEMPT_EXAMPLE, Delivery, DELIVERY_EXAMPLE, DeliveryParams, MANAGE_WEBHOOKS, WebhookParams, webhookContext } from './webhook-schemas.js';

export const registerListDeliveries: RegisterRoute = (app, deps) =>
  app.get('/v1/webhooks/:wh/deliveries', {
    config: { operation: 'webhooks.deliveries.list', access: MANAGE_WEBHOOKS },
    schema: {
      summary: "A webhook's deliveries, newest first (kept 30 days)",
      tags: ['webhooks'],
      params: WebhookParams,
      querystring: Type.Object(
        {
          state: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('dead')])),
          eventType: Type.Optional(Type.String({ maxLength: 100, description: 'Only deliveries of this event type, like record.created.' })),
          ...Paging,
        },
        { additionalProperties: false },
      ),
      response: { 200: listOf(Delivery) },
    },
    handler: async (request) => {
      const { limit = 50, cursor, state, eventType } = request.query;
      const rows = await listDeliveries(deps, inWorkspace(request).workspaceId, request.params.wh, { state, eventType, limit: limit + 1, before: decodeCursor(cursor, idPosition('dlv')) });
      return page(rows, limit, (row) => row.id, deps.config.pageBytes);
    },
  });

export const registerGetDelivery: RegisterRoute = (app, deps) =>
  app.get('/v1/webhooks/:wh/deliveries/:dlv', {
    config: { operation: 'webhooks.deliveries.get', access: MANAGE_WEBHOOKS },
    schema: {
      summary: 'One delivery with every attempt: status, duration, response and error',
      tags: ['webhooks'],
      params: DeliveryParams,
      response: {
        200: Type.Object({
          ...Delivery.properties,
          body: Type.String({ description: 'The exact bytes every attempt sent and signed: the event message.' }),
          attempts: Type.Array(Attempt),
        }, { examples: [{ ...DELIVERY_EXAMPLE, body: JSON.stringify(EVENT_EXAMPLE), attempts: [ATTEMPT_EXAMPLE] }] }),
      },
    },
    handler: async (request) => getDelivery(deps, inWorkspace(request).workspaceId, request.params.wh, request.params.dlv),
  });

export const registerReplayDelivery: RegisterRoute = (app, deps) =>
  app.post('/v1/webhooks/:wh/deliveries/:dlv/replay', {
    config: { operation: 'webhooks.deliveries.replay', access: MANAGE_WEBHOOKS },
    schema: {
      summary: 'Send the event again',
      description:
        'A finished delivery (succeeded or dead) is sent again as a new delivery: 201, the same x-baas-delivery, fresh attempts. ' +
        'A delivery still waiting for a retry is not doubled: its next attempt is brought forward to now (200, the same delivery); ' +
        'one being attempted at this moment is answered as it is (200).',
      tags: ['webhooks'],
      params: DeliveryParams,
      response: { 200: Delivery, 201: Delivery },
    },
    handler: async (request, reply) => {
      const { delivery } = await replayDelivery(deps, webhookContext(request), request.params.wh, request.params.dlv);
      return reply.status(delivery.id === request.params.dlv ? 200 : 201).send(delivery);
    },
  });
