import { Type } from 'typebox';
import { webhookHealth, HEALTH_HOURS } from '../../../modules/webhooks/webhook-health.js';
import { MAX_RETRIED_PER_CALL, retryFailedDeliveries } from '../../../modules/webhooks/retry-failed.js';
import { findWebhook } from '../../../modules/webhooks/webhooks.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { EXAMPLE_TIME, Timestamp } from '../../schemas.js';
import { HEALTH_EXAMPLE, MANAGE_WEBHOOKS, WebhookHealth, WebhookParams, webhookContext } from './webhook-schemas.js';

export const registerWebhookHealth: RegisterRoute = (app, deps) =>
  app.get('/v1/webhooks/:wh/health', {
    config: { operation: 'webhooks.health', access: MANAGE_WEBHOOKS },
    schema: {
      summary: "A webhook's health and its attempts of the last 24 hours, hour by hour",
      tags: ['webhooks'],
      params: WebhookParams,
      response: {
        200: Type.Object({
          ...WebhookHealth.properties,
          hours: Type.Array(
            Type.Object({
              hour: { ...Timestamp, description: "The hour's start (UTC)." },
              succeeded: Type.Integer({ description: 'Attempts answered 2xx.' }),
              failed: Type.Integer({ description: 'Attempts that failed.' }),
            }),
            { description: `Always ${HEALTH_HOURS} hours, oldest first; the last is the current hour.` },
          ),
        }, { examples: [{ ...HEALTH_EXAMPLE, hours: [{ hour: EXAMPLE_TIME, succeeded: 12, failed: 3 }] }] }),
      },
    },
    handler: async (request) => {
      const { workspaceId } = inWorkspace(request);
      return webhookHealth(deps, workspaceId, await findWebhook(deps.db, workspaceId, request.params.wh));
    },
  });

export const registerRetryFailedDeliveries: RegisterRoute = (app, deps) =>
  app.post('/v1/webhooks/:wh/retry-failed', {
    config: { operation: 'webhooks.retryFailed', access: MANAGE_WEBHOOKS },
    schema: {
      summary: 'Send again every delivery that gave up (dead) since a time',
      description:
        'Each dead delivery whose last attempt was at or after `since` is sent again as a new delivery of the same event, as a replay would be. ' +
        'One this webhook already sent again (a newer delivery of the same event) is left out, so a second call queues nothing twice. ' +
        `At most ${MAX_RETRIED_PER_CALL.toLocaleString('en')} per call, oldest first: call again for the rest. dryRun counts, sending nothing.`,
      tags: ['webhooks'],
      params: WebhookParams,
      body: Type.Object(
        {
          since: { ...Timestamp, description: 'Deliveries that gave up at or after this time (not in the future).' },
          dryRun: Type.Optional(Type.Boolean({ description: 'Count only.' })),
        },
        { additionalProperties: false, examples: [{ since: EXAMPLE_TIME, dryRun: true }] },
      ),
      response: {
        200: Type.Object({
          matched: Type.Integer({ description: 'Dead deliveries since the time, not sent again since.' }),
          retried: Type.Integer({ description: `Of those, queued again now (at most ${MAX_RETRIED_PER_CALL.toLocaleString('en')}; 0 for a dry run).` }),
          dryRun: Type.Boolean(),
        }, { examples: [{ matched: 42, retried: 42, dryRun: false }] }),
      },
    },
    handler: async (request) => retryFailedDeliveries(deps, webhookContext(request), request.params.wh, request.body),
  });
