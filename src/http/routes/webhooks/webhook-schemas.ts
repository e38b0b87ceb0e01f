import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { WebhookContext } from '../../../modules/webhooks/webhooks.js';
import { needs } from '../../access.js';
import { inWorkspace } from '../../auth.js';
import { requestMeta } from '../../request-meta.js';
import { idOf, Timestamp } from '../../schemas.js';
import { CollectionRef } from '../collections/collection-schemas.js';

export const MANAGE_WEBHOOKS = needs('webhooks:manage');

export const Webhook = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  collections: Type.Union([Type.Array(Type.String()), Type.Null()]),
  enabled: Type.Boolean(),
  disabledReason: Type.Union([Type.Literal('auto'), Type.Literal('manual'), Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const WebhookWithSecret = Type.Object({
  ...Webhook.properties,
  secret: Type.String({ description: 'The whsec_ signing secret. Shown once: it cannot be read again.' }),
});

export const WebhookFields = {
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'https:// address of your receiver (the rules of docs/webhooks.md apply).' }),
  events: Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: 50, description: 'Event names, or ["*"] for all events, also those added later.' }),
  collections: Type.Union([Type.Array(CollectionRef, { minItems: 1, maxItems: 100 }), Type.Null()], { description: 'Watched collections (ids or names); null or absent for all.' }),
};

export const WebhookParams = Type.Object({ wh: idOf('wh') });
export const DeliveryParams = Type.Object({ wh: idOf('wh'), dlv: idOf('dlv') });

export const Attempt = Type.Object({
  id: Type.String(),
  at: Timestamp,
  status: Type.Union([Type.Integer(), Type.Null()]),
  durationMs: Type.Integer(),
  responseHeaders: Type.Record(Type.String(), Type.String()),
  responseBody: Type.String({ description: 'The first 16 KiB.' }),
  error: Type.Union([Type.String(), Type.Null()]),
});

export const Delivery = Type.Object({
  id: Type.String(),
  eventId: Type.String(),
  eventType: Type.String(),
  webhookId: Type.String(),
  state: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('dead')]),
  held: Type.Boolean({ description: 'Pending while the webhook is off: kept, and sent once it is enabled again.' }),
  attemptCount: Type.Integer(),
  nextAttemptAt: Type.Union([Timestamp, Type.Null()], { description: 'When the next attempt is due; null when none is coming (finished, or held).' }),
  createdAt: Timestamp,
});

export function webhookContext(request: FastifyRequest): WebhookContext {
  const { workspaceId, actor } = inWorkspace(request);
  return { workspaceId, actor, meta: requestMeta(request) };
}
