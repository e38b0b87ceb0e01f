import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { WebhookContext } from '../../../modules/webhooks/webhooks.js';
import { needs } from '../../access.js';
import { inWorkspace } from '../../auth.js';
import { requestMeta } from '../../request-meta.js';
import { EVENT_TYPES } from '../../../modules/events/event-types.js';
import { EXAMPLE_LATER, EXAMPLE_TIME, exampleId, idOf, Timestamp } from '../../schemas.js';
import { CollectionRef } from '../collections/collection-schemas.js';

export const MANAGE_WEBHOOKS = needs('webhooks:manage');

/** What a webhook subscribes to: event types, or * for every event, also those added later. */
const SubscribedEvent = Type.Unsafe<string>({ type: 'string', enum: ['*', ...EVENT_TYPES] });
// Typed as a string: deliveries are read back from the database as text.
const DeliveredEventType = Type.Unsafe<string>({ type: 'string', enum: [...EVENT_TYPES] });

const WEBHOOK_EXAMPLE = {
  id: exampleId('wh'),
  url: 'https://hooks.example.com/plainbase',
  events: ['record.created', 'record.updated'],
  collections: null,
  enabled: true,
  disabledReason: null,
  createdAt: EXAMPLE_TIME,
  updatedAt: EXAMPLE_LATER,
};

export const Webhook = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(SubscribedEvent),
  collections: Type.Union([Type.Array(Type.String()), Type.Null()]),
  enabled: Type.Boolean(),
  disabledReason: Type.Union([Type.Literal('auto'), Type.Literal('manual'), Type.Literal('restored'), Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}, { examples: [WEBHOOK_EXAMPLE] });

export const HEALTH_EXAMPLE = {
  state: 'retrying',
  lastAttemptAt: EXAMPLE_LATER,
  lastStatus: 404,
  lastError: 'HTTP 404',
  failureStreak: 3,
  failingSince: EXAMPLE_TIME,
  waitingRetries: 1,
  nextAttemptAt: EXAMPLE_LATER,
};

export const WebhookHealth = Type.Object({
  state: Type.Union([Type.Literal('new'), Type.Literal('healthy'), Type.Literal('retrying'), Type.Literal('failing'), Type.Literal('disabled')], {
    description: 'new: never attempted; healthy: the last attempt succeeded; retrying: the last attempts failed and are being retried; ' +
      'failing: a delivery gave up since the last success; disabled: switched off.',
  }),
  lastAttemptAt: Type.Union([Timestamp, Type.Null()]),
  lastStatus: Type.Union([Type.Integer(), Type.Null()], { description: "The last attempt's HTTP status; null when there was no answer (see lastError)." }),
  lastError: Type.Union([Type.String(), Type.Null()], { description: 'Why the last attempt failed: HTTP 404, a refused connection, a timeout, destination not allowed.' }),
  failureStreak: Type.Integer({ description: 'Failed attempts since the last success, counted over the newest 10,000 attempts (a longer streak reads 10000).' }),
  failingSince: Type.Union([Timestamp, Type.Null()], { description: 'The first failed attempt of that streak (of those counted).' }),
  waitingRetries: Type.Integer({ description: 'Deliveries that failed at least once and wait for their next attempt.' }),
  nextAttemptAt: Type.Union([Timestamp, Type.Null()], { description: 'When the earliest of those is attempted next.' }),
}, { examples: [HEALTH_EXAMPLE] });

export const WebhookWithHealth = Type.Object({
  ...Webhook.properties,
  health: WebhookHealth,
}, { examples: [{ ...WEBHOOK_EXAMPLE, health: HEALTH_EXAMPLE }] });

export const WebhookWithSecret = Type.Object({
  ...Webhook.properties,
  secret: Type.String({ description: 'The whsec_ signing secret. Shown once: it cannot be read again.' }),
}, { examples: [{ ...WEBHOOK_EXAMPLE, secret: 'whsec_Vt8Xk2bR5nW0yZ4aC7dF1gH6jL9mP2sT5vX8zB0eQ3r' }] });

export const WebhookFields = {
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'https:// address of your receiver (the rules of docs/webhooks.md apply).' }),
  // Checked by the webhooks module, whose refusal names the unknown events; the document lists them.
  events: Type.Array(Type.String({ maxLength: 100, examples: ['record.created'] }), {
    minItems: 1,
    maxItems: 50,
    description: `Event types (${EVENT_TYPES.join(', ')}), or ["*"] for all events, also those added later.`,
  }),
  collections: Type.Union([Type.Array(CollectionRef, { minItems: 1, maxItems: 100 }), Type.Null()], { description: 'Watched collections (ids or names); null or absent for all.' }),
};

export const WebhookParams = Type.Object({ wh: idOf('wh') });
export const DeliveryParams = Type.Object({ wh: idOf('wh'), dlv: idOf('dlv') });

export const ATTEMPT_EXAMPLE = {
  id: exampleId('att'),
  at: EXAMPLE_TIME,
  status: 200,
  durationMs: 84,
  responseHeaders: { 'content-type': 'text/plain' },
  responseBody: 'ok',
  error: null,
};

export const Attempt = Type.Object({
  id: Type.String(),
  at: Timestamp,
  status: Type.Union([Type.Integer(), Type.Null()]),
  durationMs: Type.Integer(),
  responseHeaders: Type.Record(Type.String(), Type.String()),
  responseBody: Type.String({ description: 'The first 16 KiB.' }),
  error: Type.Union([Type.String(), Type.Null()]),
}, { examples: [ATTEMPT_EXAMPLE] });

export const DELIVERY_EXAMPLE = {
  id: exampleId('dlv'),
  eventId: exampleId('evt'),
  eventType: 'record.created',
  webhookId: exampleId('wh'),
  state: 'succeeded',
  held: false,
  attemptCount: 1,
  nextAttemptAt: null,
  createdAt: EXAMPLE_TIME,
  lastStatus: 200,
  lastError: null,
};

export const Delivery = Type.Object({
  id: Type.String(),
  eventId: Type.String(),
  eventType: DeliveredEventType,
  webhookId: Type.String(),
  state: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('dead')]),
  held: Type.Boolean({ description: 'Pending while the webhook is off: kept, and sent once it is enabled again.' }),
  attemptCount: Type.Integer(),
  nextAttemptAt: Type.Union([Timestamp, Type.Null()], { description: 'When the next attempt is due; null when none is coming (finished, or held).' }),
  createdAt: Timestamp,
  lastStatus: Type.Union([Type.Integer(), Type.Null()], { description: "The last attempt's HTTP status; null when it got none, or before the first attempt." }),
  lastError: Type.Union([Type.String(), Type.Null()], { description: 'Why the last attempt failed (HTTP 404, a refused connection, a timeout); null after a success.' }),
}, { examples: [DELIVERY_EXAMPLE] });

export function webhookContext(request: FastifyRequest): WebhookContext {
  const { workspaceId, actor } = inWorkspace(request);
  return { workspaceId, actor, meta: requestMeta(request) };
}
