import { Type } from 'typebox';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhooks,
  pingWebhook,
  rotateWebhookSecret,
  setWebhookEnabled,
  updateWebhook,
} from '../../../modules/webhooks/webhooks.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { decodeCursor, idPosition, page } from '../../cursor.js';
import { listOf, NoContent, Paging } from '../../schemas.js';
import { Attempt, MANAGE_WEBHOOKS, Webhook, WebhookFields, WebhookParams, WebhookWithHealth, WebhookWithSecret, webhookContext } from './webhook-schemas.js';

export const registerListWebhooks: RegisterRoute = (app, deps) =>
  app.get('/v1/webhooks', {
    config: { operation: 'webhooks.list', access: MANAGE_WEBHOOKS },
    schema: {
      summary: 'Webhooks of the workspace, each with its health',
      tags: ['webhooks'],
      querystring: Type.Object({ ...Paging }, { additionalProperties: false }),
      response: { 200: listOf(WebhookWithHealth) },
    },
    handler: async (request) => {
      const { limit = 50, cursor } = request.query;
      const rows = await listWebhooks(deps, inWorkspace(request).workspaceId, { limit: limit + 1, after: decodeCursor(cursor, idPosition('wh')) });
      return page(rows, limit, (row) => row.id, deps.config.pageBytes);
    },
  });

export const registerCreateWebhook: RegisterRoute = (app, deps) =>
  app.post('/v1/webhooks', {
    config: { operation: 'webhooks.create', access: MANAGE_WEBHOOKS },
    schema: {
      summary: 'Register a receiver; the signing secret is in this response only',
      tags: ['webhooks'],
      body: Type.Object(
        { url: WebhookFields.url, events: WebhookFields.events, collections: Type.Optional(WebhookFields.collections) },
        { additionalProperties: false, examples: [{ url: 'https://hooks.example.com/plainbase', events: ['record.created', 'record.updated'], collections: ['leads'] }] },
      ),
      response: { 201: WebhookWithSecret },
    },
    handler: async (request, reply) => {
      const { webhook, secret } = await createWebhook(deps, webhookContext(request), request.body);
      return reply.status(201).send({ ...webhook, secret });
    },
  });

export const registerGetWebhook: RegisterRoute = (app, deps) =>
  app.get('/v1/webhooks/:wh', {
    config: { operation: 'webhooks.get', access: MANAGE_WEBHOOKS },
    schema: { summary: 'One webhook with its health (never its secret)', tags: ['webhooks'], params: WebhookParams, response: { 200: WebhookWithHealth } },
    handler: async (request) => getWebhook(deps, inWorkspace(request).workspaceId, request.params.wh),
  });

export const registerUpdateWebhook: RegisterRoute = (app, deps) =>
  app.patch('/v1/webhooks/:wh', {
    config: { operation: 'webhooks.update', access: MANAGE_WEBHOOKS },
    schema: {
      summary: "Change a webhook's URL, events or collections",
      tags: ['webhooks'],
      params: WebhookParams,
      body: Type.Object(
        { url: Type.Optional(WebhookFields.url), events: Type.Optional(WebhookFields.events), collections: Type.Optional(WebhookFields.collections) },
        { additionalProperties: false, minProperties: 1, examples: [{ events: ['*'] }] },
      ),
      response: { 200: Webhook },
    },
    handler: async (request) => updateWebhook(deps, webhookContext(request), request.params.wh, request.body),
  });

export const registerDeleteWebhook: RegisterRoute = (app, deps) =>
  app.delete('/v1/webhooks/:wh', {
    config: { operation: 'webhooks.delete', access: MANAGE_WEBHOOKS },
    schema: { summary: 'Delete a webhook and its delivery log', tags: ['webhooks'], params: WebhookParams, response: { 204: NoContent } },
    handler: async (request, reply) => {
      await deleteWebhook(deps, webhookContext(request), request.params.wh);
      return reply.status(204).send(null);
    },
  });

const registerSwitch = (enabled: boolean): RegisterRoute => (app, deps) =>
  app.post(`/v1/webhooks/:wh/${enabled ? 'enable' : 'disable'}`, {
    config: { operation: enabled ? 'webhooks.enable' : 'webhooks.disable', access: MANAGE_WEBHOOKS },
    schema: {
      summary: enabled ? 'Switch a webhook back on; clears its dead-in-a-row counter' : 'Switch a webhook off; its pending deliveries wait',
      tags: ['webhooks'],
      params: WebhookParams,
      response: { 200: Webhook },
    },
    handler: async (request) => setWebhookEnabled(deps, webhookContext(request), request.params.wh, enabled),
  });
export const registerEnableWebhook = registerSwitch(true);
export const registerDisableWebhook = registerSwitch(false);

export const registerRotateWebhookSecret: RegisterRoute = (app, deps) =>
  app.post('/v1/webhooks/:wh/rotate-secret', {
    config: { operation: 'webhooks.rotateSecret', access: MANAGE_WEBHOOKS },
    schema: {
      summary: 'A new signing secret, used from the next attempt on; the old one stops at once',
      tags: ['webhooks'],
      params: WebhookParams,
      response: { 200: WebhookWithSecret },
    },
    handler: async (request) => {
      const { webhook, secret } = await rotateWebhookSecret(deps, webhookContext(request), request.params.wh);
      return { ...webhook, secret };
    },
  });

export const registerPingWebhook: RegisterRoute = (app, deps) =>
  app.post('/v1/webhooks/:wh/ping', {
    config: { operation: 'webhooks.ping', access: MANAGE_WEBHOOKS },
    schema: {
      summary: 'Send a webhook.ping test call now; answers how the receiver replied',
      tags: ['webhooks'],
      params: WebhookParams,
      response: {
        200: Type.Object(
          { ok: Type.Boolean(), ...Type.Omit(Attempt, ['id', 'at']).properties },
          { examples: [{ ok: true, status: 200, durationMs: 84, responseHeaders: { 'content-type': 'text/plain' }, responseBody: 'ok', error: null }] },
        ),
      },
    },
    handler: async (request) => pingWebhook(deps, webhookContext(request), request.params.wh),
  });
