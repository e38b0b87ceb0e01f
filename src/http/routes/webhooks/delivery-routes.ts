import { Type } from 'typebox';
import { getDelivery, listDeliveries, replayDelivery } from '../../../modules/webhooks/deliveries.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { decodeCursor, idPosition, page } from '../../cursor.js';
import { listOf, Paging } from '../../schemas.js';
import { Attempt, Delivery, DeliveryParams, MANAGE_WEBHOOKS, WebhookParams, webhookContext } from './webhook-schemas.js';

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
          eventType: Type.Optional(Type.String({ maxLength: 100 })),
          ...Paging,
        },
        { additionalProperties: false },
      ),
      response: { 200: listOf(Delivery) },
    },
    handler: async (request) => {
      const { limit = 50, cursor, state, eventType } = request.query;
      const rows = await listDeliveries(deps, inWorkspace(request).workspaceId, request.params.wh, { state, eventType, limit: limit + 1, before: decodeCursor(cursor, idPosition('dlv')) });
      return page(rows, limit, (row) => row.id);
    },
  });

export const registerGetDelivery: RegisterRoute = (app, deps) =>
  app.get('/v1/webhooks/:wh/deliveries/:dlv', {
    config: { operation: 'webhooks.deliveries.get', access: MANAGE_WEBHOOKS },
    schema: {
      summary: 'One delivery with every attempt: status, duration, response and error',
      tags: ['webhooks'],
      params: DeliveryParams,
      response: { 200: Type.Object({ ...Delivery.properties, attempts: Type.Array(Attempt) }) },
    },
    handler: async (request) => getDelivery(deps, inWorkspace(request).workspaceId, request.params.wh, request.params.dlv),
  });

export const registerReplayDelivery: RegisterRoute = (app, deps) =>
  app.post('/v1/webhooks/:wh/deliveries/:dlv/replay', {
    config: { operation: 'webhooks.deliveries.replay', access: MANAGE_WEBHOOKS },
    schema: {
      summary: 'Send the event again as a new delivery (same x-baas-delivery, fresh attempts)',
      tags: ['webhooks'],
      params: DeliveryParams,
      response: { 201: Delivery },
    },
    handler: async (request, reply) => reply.status(201).send(await replayDelivery(deps, webhookContext(request), request.params.wh, request.params.dlv)),
  });
