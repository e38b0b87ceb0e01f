import type { Deps } from '../../deps.js';
import { lockParentRow } from '../../db/parent-row-lock.js';
import { rowLimit } from '../../db/row-limit.js';
import type { Executor, WebhooksTable } from '../../db/schema.js';
import { AppError, invalidRequest, notFound } from '../../errors.js';
import { hasPrefix, newId } from '../../ids.js';
import { guardOptions, senderFor } from '../../delivery/guard-options.js';
import type { AttemptResult } from '../../delivery/send.js';
import { newSigningSecret } from '../../delivery/sign.js';
import { BlockedUrl, checkWebhookUrl, type BlockReason } from '../../delivery/url-guard.js';
import { recordAudit, type Actor, type RequestMeta } from '../audit/audit.js';
import { notifyEventsWritten } from '../events/outbox-signal.js';
import { EVENT_TYPES, type EventMessage } from '../events/outbox.js';
import { healthOf, type WebhookHealth } from './webhook-health.js';

export const ALL_EVENTS = '*';

export interface WebhookView {
  id: string;
  url: string;
  events: string[];
  collections: string[] | null;
  enabled: boolean;
  /** `restored`: turned off by `plainbase restore` until a person turns it on (restored-webhooks.ts). */
  disabledReason: 'auto' | 'manual' | 'restored' | null;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookContext {
  workspaceId: string;
  actor: Actor;
  meta: RequestMeta;
}

export interface WebhookInput {
  url: string;
  events: string[];
  collections?: string[] | null;
}

export function toWebhookView(row: WebhooksTable): WebhookView {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    collections: row.collections ? (JSON.parse(row.collections) as string[]) : null,
    enabled: Boolean(row.enabled),
    disabledReason: row.disabled_reason as WebhookView['disabledReason'],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * Checks the URL against docs/design.md §7; a broken rule is 400 INVALID_WEBHOOK_URL naming the
 * rule, with how to test against a receiver on one's own machine where that is what was tried.
 */
async function checkUrl(deps: Deps, url: string): Promise<void> {
  try {
    await checkWebhookUrl(url, guardOptions(deps));
  } catch (error) {
    if (error instanceof BlockedUrl) {
      const hint = BLOCKED_URL_HINTS[error.reason];
      throw new AppError('INVALID_WEBHOOK_URL', hint ? `${error.message} ${hint}` : error.message, { reason: error.reason, field: 'body.url' });
    }
    throw error;
  }
}

const LOCAL_TESTING =
  'Webhooks call only public addresses, so that nobody can use them to reach a private network. To test with a receiver on your own machine, ' +
  'start Plainbase with PLAINBASE_ENV=development and PLAINBASE_WEBHOOK_ALLOW_PRIVATE=1 (for testing only; see docs/webhooks.md).';
const BLOCKED_URL_HINTS: Partial<Record<BlockReason, string>> = {
  scheme: 'Receivers must use https in production; PLAINBASE_ENV=development also allows http:// for local testing (see docs/webhooks.md).',
  'internal-hostname': LOCAL_TESTING,
  'private-address': LOCAL_TESTING,
  credentials: 'Put a secret in the path or check the signature instead: every delivery is signed (see docs/webhooks.md).',
};

function checkEvents(events: string[]): string[] {
  const unique = [...new Set(events)];
  if (unique.includes(ALL_EVENTS) && unique.length > 1) throw invalidRequest('Use ["*"] alone for all events.', { field: 'body.events' });
  const unknown = unique.filter((event) => event !== ALL_EVENTS && !(EVENT_TYPES as readonly string[]).includes(event));
  if (unknown.length) throw invalidRequest(`Unknown event ${unknown[0]}; see the list of events in the docs.`, { field: 'body.events', unknown });
  return unique;
}

async function resolveCollections(executor: Executor, workspaceId: string, refs: string[] | null | undefined): Promise<string[] | null> {
  if (!refs) return null;
  const ids: string[] = [];
  for (const ref of new Set(refs)) {
    const row = await executor
      .selectFrom('collections')
      .select('id')
      .where('workspace_id', '=', workspaceId)
      .where(hasPrefix(ref, 'col') ? 'id' : 'name', '=', ref)
      .executeTakeFirst();
    if (!row) throw invalidRequest(`No collection ${ref} in this workspace.`, { field: 'body.collections' });
    ids.push(row.id);
  }
  return ids;
}

export async function findWebhook(executor: Executor, workspaceId: string, id: string): Promise<WebhooksTable> {
  const row = await executor.selectFrom('webhooks').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('webhook');
  return row;
}

const audit = (executor: Executor, deps: Deps, context: WebhookContext, action: string, id: string, details?: Record<string, unknown>) =>
  recordAudit(executor, deps.clock.now(), context.meta, { workspaceId: context.workspaceId, actor: context.actor, action, target: { type: 'webhook', id }, details });

/** Creates a webhook; its signing secret is in this answer only. */
export async function createWebhook(deps: Deps, context: WebhookContext, input: WebhookInput): Promise<{ webhook: WebhookView; secret: string }> {
  await checkUrl(deps, input.url);
  const events = checkEvents(input.events);
  const now = deps.clock.now().toISOString();
  const secret = newSigningSecret();
  return deps.db.transaction().execute(async (trx) => {
    await checkRoomForWebhook(deps, trx, context.workspaceId);
    const collections = await resolveCollections(trx, context.workspaceId, input.collections);
    const row: WebhooksTable = {
      id: newId('wh', Date.parse(now)),
      workspace_id: context.workspaceId,
      url: input.url,
      events: JSON.stringify(events),
      collections: collections ? JSON.stringify(collections) : null,
      secret,
      enabled: 1,
      disabled_reason: null,
      dead_streak: 0,
      created_at: now,
      updated_at: now,
    };
    await trx.insertInto('webhooks').values(row).execute();
    await audit(trx, deps, context, 'webhook.created', row.id, { url: row.url, events, collections });
    return { webhook: toWebhookView(row), secret };
  });
}

/**
 * A workspace holds at most `webhooksPerWorkspace` webhooks, so that no tenant can claim the
 * worker's capacity by numbers. Concurrent creates are counted one after the other
 * (lockParentRow).
 */
async function checkRoomForWebhook(deps: Deps, trx: Executor, workspaceId: string): Promise<void> {
  await lockParentRow(trx, 'workspaces', workspaceId);
  const { count } = await trx
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('count'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  const limit = deps.config.webhooksPerWorkspace;
  if (Number(count) >= limit) {
    throw new AppError('CONFLICT', `This workspace already has ${limit} webhooks, the most it may hold (PLAINBASE_WEBHOOKS_PER_WORKSPACE). Delete one it no longer needs, or point one webhook at several events and collections.`, { limit });
  }
}

export type WebhookWithHealth = WebhookView & { health: WebhookHealth };

/** Up to `limit` webhooks in id order, after the id `after`, each with its health (webhook-health.ts). */
export async function listWebhooks(deps: Deps, workspaceId: string, page: { limit: number; after?: string }): Promise<WebhookWithHealth[]> {
  let query = deps.db.selectFrom('webhooks').selectAll().where('workspace_id', '=', workspaceId);
  if (page.after !== undefined) query = query.where('id', '>', page.after);
  const rows = await query.orderBy('id').limit(rowLimit(page.limit)).execute();
  const healths = await healthOf(deps.db, workspaceId, rows);
  return rows.map((row) => ({ ...toWebhookView(row), health: healths.get(row.id)! }));
}

/** One webhook with its health. */
export async function getWebhook(deps: Deps, workspaceId: string, id: string): Promise<WebhookWithHealth> {
  const row = await findWebhook(deps.db, workspaceId, id);
  const healths = await healthOf(deps.db, workspaceId, [row]);
  return { ...toWebhookView(row), health: healths.get(row.id)! };
}

export async function updateWebhook(deps: Deps, context: WebhookContext, id: string, input: Partial<WebhookInput>): Promise<WebhookView> {
  if (input.url !== undefined) await checkUrl(deps, input.url);
  const events = input.events === undefined ? undefined : checkEvents(input.events);
  return deps.db.transaction().execute(async (trx) => {
    const row = await findWebhook(trx, context.workspaceId, id);
    const changes: Partial<WebhooksTable> = { updated_at: deps.clock.now().toISOString() };
    if (input.url !== undefined) changes.url = input.url;
    if (events !== undefined) changes.events = JSON.stringify(events);
    if (input.collections !== undefined) {
      const collections = await resolveCollections(trx, context.workspaceId, input.collections);
      changes.collections = collections ? JSON.stringify(collections) : null;
    }
    await trx.updateTable('webhooks').set(changes).where('id', '=', id).execute();
    await audit(trx, deps, context, 'webhook.updated', id, { changed: Object.keys(input) });
    return toWebhookView({ ...row, ...changes });
  });
}

export async function deleteWebhook(deps: Deps, context: WebhookContext, id: string): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await findWebhook(trx, context.workspaceId, id);
    await trx.deleteFrom('webhooks').where('id', '=', id).execute();
    await audit(trx, deps, context, 'webhook.deleted', id);
  });
}

/**
 * Enabling clears the dead-in-a-row counter (docs/design.md §7) and lets the worker send the
 * deliveries held while the webhook was off; disabling by hand is `manual`.
 */
export async function setWebhookEnabled(deps: Deps, context: WebhookContext, id: string, enabled: boolean): Promise<WebhookView> {
  const view = await deps.db.transaction().execute(async (trx) => {
    const row = await findWebhook(trx, context.workspaceId, id);
    const changes = enabled
      ? { enabled: 1, disabled_reason: null, dead_streak: 0, updated_at: deps.clock.now().toISOString() }
      : { enabled: 0, disabled_reason: 'manual', updated_at: deps.clock.now().toISOString() };
    await trx.updateTable('webhooks').set(changes).where('id', '=', id).execute();
    await audit(trx, deps, context, enabled ? 'webhook.enabled' : 'webhook.disabled', id);
    return toWebhookView({ ...row, ...changes });
  });
  // The held deliveries are due now: wake this process's worker (others find them by their poll).
  if (enabled) notifyEventsWritten();
  return view;
}

/** A new secret that signs from the next attempt on; the old one stops at once (no overlap). */
export async function rotateWebhookSecret(deps: Deps, context: WebhookContext, id: string): Promise<{ webhook: WebhookView; secret: string }> {
  const secret = newSigningSecret();
  return deps.db.transaction().execute(async (trx) => {
    const row = await findWebhook(trx, context.workspaceId, id);
    const updatedAt = deps.clock.now().toISOString();
    await trx.updateTable('webhooks').set({ secret, updated_at: updatedAt }).where('id', '=', id).execute();
    await audit(trx, deps, context, 'webhook.secret_rotated', id);
    return { webhook: toWebhookView({ ...row, updated_at: updatedAt }), secret };
  });
}

/**
 * A test call (`webhook.ping`): one attempt, its result answered to the caller, never retried
 * and never counted toward the dead-in-a-row counter.
 */
export async function pingWebhook(deps: Deps, context: WebhookContext, id: string): Promise<AttemptResult> {
  const row = await findWebhook(deps.db, context.workspaceId, id);
  const now = deps.clock.now();
  const message: Omit<EventMessage, 'collectionId'> & { collectionId: null } = {
    id: newId('evt', now.getTime()),
    type: 'webhook.ping',
    createdAt: now.toISOString(),
    workspaceId: context.workspaceId,
    collectionId: null,
    data: { webhook: { id: row.id } },
  };
  return senderFor(deps).send({
    url: row.url,
    secret: row.secret,
    webhookId: row.id,
    eventId: message.id,
    eventType: message.type,
    body: JSON.stringify(message),
    timestamp: Math.floor(now.getTime() / 1000),
  });
}
