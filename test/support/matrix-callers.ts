import { ROLE_ABILITIES, SCOPES, type Role, type Scope } from '../../src/abilities.js';
import type { Config } from '../../src/config.js';
import { fanOutEvents } from '../../src/modules/webhooks/delivery-queue.js';
import { createOwner } from '../../src/modules/setup/first-owner.js';
import { createSession } from '../../src/modules/sessions/sessions.js';
import { addMember, Client, signedInOwner } from './client.js';
import type { TestApp } from './harness.js';

/**
 * The world of the access-matrix test (test/access-matrix.test.ts): one workspace with things
 * to point routes at, and every kind of caller, each described by what it is (not by what the
 * app would answer), so the test can work out the expected answer from the abilities table.
 */

/** What a caller is, as far as the abilities table cares. */
export type CallerKind =
  | { type: 'anonymous' }
  /** A valid key of the workspace: its effective scopes, and the collections it is restricted to (null: all). */
  | { type: 'key'; scopes: ReadonlySet<Scope>; collections: readonly CollectionName[] | null }
  /** A key that must be refused before anything else. */
  | { type: 'refused-key'; code: 'INVALID_API_KEY' | 'API_KEY_EXPIRED' }
  | { type: 'session'; role: Role }
  /** A signed-in person of another workspace, naming ours in x-baas-workspace. */
  | { type: 'stranger' };

export type CollectionName = 'alpha' | 'beta' | 'pub';

/**
 * Text that appears only inside one collection's record data, file content or schema, so an
 * answer that holds it shows that content: the matrix checks that no caller gets one it may not
 * read (records:read, files:read, schemas:read).
 */
export type ContentKind = 'record' | 'file' | 'schema';
export const marker = (kind: ContentKind, collection: CollectionName) => `${kind}-content-of-${collection}`;
export const CONTENT_KINDS: readonly ContentKind[] = ['record', 'file', 'schema'];
/** The data of each collection's fixture record. */
export const recordDataOf = (collection: CollectionName) => ({ n: 1, note: marker('record', collection) });

export interface Caller {
  name: string;
  kind: CallerKind;
  /** What the caller is once the clock has passed every expiry and grace period; unset when time changes nothing. */
  later?: CallerKind;
  /** The collection this caller's requests name in {col} (and whose record in {rec}). */
  collection: CollectionName;
  headers(): Record<string, string>;
  /** For sessions: a new session after a request ended this one (sign-out). */
  renew?: () => Promise<void>;
}

export interface MatrixWorld {
  workspaceId: string;
  collections: Record<CollectionName, { id: string; recordId: string }>;
  /** Things destructive routes may act on: no caller depends on them. */
  targets: {
    keyId: string;
    serviceAccountId: string;
    personId: string;
    inviteId: string;
    inviteToken: string;
    webhookId: string;
    deliveryId: string;
  };
  callers: Caller[];
}

const STRANGER = { email: 'stranger@example.com', password: 'stranger password 1', name: 'Sam Stranger' };
const HOUR_MS = 3600_000;

function ok<T = any>(reply: { status: number; body: T }, expected: number, what: string): T {
  if (reply.status !== expected) throw new Error(`matrix fixture: ${what} answered ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
}

/**
 * What the matrix app needs beyond the test defaults: its target webhook points at a closed port
 * on loopback (plain http, private address), so a ping fails at once without leaving the machine.
 */
export const MATRIX_CONFIG: Partial<Config> = { env: 'development', webhookAllowPrivate: true };
const WEBHOOK_URL = 'http://127.0.0.1:1/hooks';

const bearer = (secret: string) => () => ({ authorization: `Bearer ${secret}` });

/**
 * Builds the fixture and every caller once; the clock stands at the time of creation. Keys with
 * an expiry or a grace period change kind after `LATER_MS`.
 */
export async function buildMatrixWorld(t: TestApp): Promise<MatrixWorld> {
  const owner = await signedInOwner(t);
  const workspaceId = owner.workspaceId!;

  const collections = {} as MatrixWorld['collections'];
  await Promise.all((['alpha', 'beta', 'pub'] as const).map(async (name) => {
    const col = ok(await owner.post('/v1/collections', { name, public: name === 'pub' }), 201, `create collection ${name}`);
    const rec = ok(await owner.post(`/v1/collections/${name}/records`, { data: recordDataOf(name) }), 201, `create record in ${name}`);
    collections[name] = { id: col.id, recordId: rec.id };
  }));
  const now = t.clock.now().getTime();
  const createKey = async (name: string, body: Record<string, unknown>) =>
    ok(await owner.post('/v1/keys', { name, ...body }), 201, `create key ${name}`) as { id: string; secret: string };
  const rotate = async (key: { id: string }, gracePeriodSeconds: number) =>
    ok(await owner.post(`/v1/keys/${key.id}/rotate`, { gracePeriodSeconds }), 200, `rotate key with grace ${gracePeriodSeconds}`) as { secret: string };
  const editorScopes = SCOPES.filter((scope) => ROLE_ABILITIES.editor.has(scope));
  const expiringScopes: Scope[] = ['collections:read', 'records:read', 'records:create'];
  const graceScopes: Scope[] = ['schemas:read', 'schemas:write', 'records:update'];

  // Independent of each other, so made together (passwords are slow to hash).
  const [, targetKey, targetAccount, targetMember, invite, members, stranger, singleScopeKeys, all, restricted, expiring, revoked, rotatedAtOnce, rotated, robotKey] = await Promise.all([
    owner.post('/v1/collections/alpha/schemas', { schema: { type: 'object', description: marker('schema', 'alpha') } }).then((reply) => ok(reply, 201, 'create schema version 1 in alpha')),
    // Targets for routes that change or end things: no caller depends on them.
    createKey('target', { scopes: ['records:read'] }),
    owner.post('/v1/service-accounts', { name: 'target', role: 'viewer' }).then((reply) => ok(reply, 201, 'create target service account')),
    addMember(t, owner, 'target@example.com', 'viewer'),
    owner.post('/v1/invites', { email: 'pending@example.com', role: 'viewer' }).then((reply) => ok(reply, 201, 'create invite')),
    Promise.all((['admin', 'editor', 'viewer'] as const).map((role) => addMember(t, owner, `${role}@example.com`, role))),
    (async () => {
      const { person } = await createOwner(t.deps, STRANGER);
      const client = new Client(t) as Client & { personId: string };
      client.personId = person.id;
      client.cookie = (await createSession(t.deps.db, t.deps, person.id)).token;
      return client;
    })(),
    Promise.all(SCOPES.map((scope) => createKey(`only ${scope}`, { scopes: [scope] }))),
    createKey('all scopes', { scopes: [...SCOPES] }),
    createKey('restricted to alpha', { scopes: [...SCOPES], collections: [collections.alpha.id] }),
    createKey('expires in 1 h', { scopes: expiringScopes, expiresAt: new Date(now + HOUR_MS).toISOString() }),
    createKey('revoked', { scopes: [...SCOPES] }).then(async (key) => {
      ok(await owner.post(`/v1/keys/${key.id}/revoke`), 200, 'revoke key');
      return key;
    }),
    createKey('rotated at once', { scopes: [...SCOPES] }).then(async (key) => ({ old: key, next: await rotate(key, 0) })),
    createKey('rotated with grace', { scopes: graceScopes }).then(async (key) => ({ old: key, next: await rotate(key, 2 * 3600) })),
    owner.post('/v1/service-accounts', { name: 'robot', role: 'editor' }).then(async (reply) => {
      const robot = ok(reply, 201, 'create service account');
      return createKey('robot key', { scopes: editorScopes, serviceAccountId: robot.id });
    }),
  ]);

  // A webhook and one delivery of it: the webhook must exist before the event that it hears of.
  const webhook = ok(await owner.post('/v1/webhooks', { url: WEBHOOK_URL, events: ['*'] }), 201, 'create webhook');
  t.clock.advance(1);
  ok(await owner.post('/v1/collections/alpha/records', { data: { n: 2, note: marker('record', 'alpha') } }), 201, 'create a record the webhook hears of');
  await fanOutEvents(t.deps, 100);
  const deliveries = ok(await owner.get(`/v1/webhooks/${webhook.id}/deliveries`), 200, 'list deliveries');
  if (!deliveries.data?.length) throw new Error('matrix fixture: the webhook got no delivery');

  const callers: Caller[] = [];
  const anonymous = { type: 'anonymous' } as const;
  callers.push({ name: 'anonymous', kind: anonymous, collection: 'alpha', headers: () => ({}) });
  callers.push({ name: 'anonymous on a public collection', kind: anonymous, collection: 'pub', headers: () => ({}) });

  const keyKind = (scopes: readonly Scope[], only: CollectionName[] | null = null): CallerKind => ({ type: 'key', scopes: new Set(scopes), collections: only });
  SCOPES.forEach((scope, index) => {
    callers.push({ name: `key with only ${scope}`, kind: keyKind([scope]), collection: 'alpha', headers: bearer(singleScopeKeys[index]!.secret) });
  });
  callers.push({ name: 'key with all scopes', kind: keyKind(SCOPES), collection: 'alpha', headers: bearer(all.secret) });
  callers.push({ name: 'key restricted to alpha, inside', kind: keyKind(SCOPES, ['alpha']), collection: 'alpha', headers: bearer(restricted.secret) });
  callers.push({ name: 'key restricted to alpha, on beta', kind: keyKind(SCOPES, ['alpha']), collection: 'beta', headers: bearer(restricted.secret) });
  callers.push({
    name: 'key expiring in 1 h',
    kind: keyKind(expiringScopes),
    later: { type: 'refused-key', code: 'API_KEY_EXPIRED' },
    collection: 'alpha',
    headers: bearer(expiring.secret),
  });
  callers.push({ name: 'revoked key', kind: { type: 'refused-key', code: 'INVALID_API_KEY' }, collection: 'alpha', headers: bearer(revoked.secret) });
  callers.push({ name: 'old secret of a key rotated at once', kind: { type: 'refused-key', code: 'INVALID_API_KEY' }, collection: 'alpha', headers: bearer(rotatedAtOnce.old.secret) });
  callers.push({ name: 'new secret of a key rotated at once', kind: keyKind(SCOPES), collection: 'alpha', headers: bearer(rotatedAtOnce.next.secret) });
  callers.push({
    name: 'old secret of a key rotated with 2 h grace',
    kind: keyKind(graceScopes),
    later: { type: 'refused-key', code: 'INVALID_API_KEY' },
    collection: 'alpha',
    headers: bearer(rotated.old.secret),
  });
  callers.push({
    name: 'new secret of a key rotated with 2 h grace',
    kind: keyKind(graceScopes),
    later: keyKind(graceScopes),
    collection: 'alpha',
    headers: bearer(rotated.next.secret),
  });
  callers.push({ name: 'key of an editor service account', kind: keyKind(editorScopes), collection: 'alpha', headers: bearer(robotKey.secret) });

  // Sessions, all naming our workspace. Each gets a new session when a request (sign-out) ended it.
  const sessionCaller = (name: string, kind: CallerKind, client: Client & { personId: string }): Caller => ({
    name,
    kind,
    collection: 'alpha',
    headers: () => ({ cookie: `plainbase_session=${client.cookie}`, 'x-baas-workspace': workspaceId }),
    renew: async () => {
      client.cookie = (await createSession(t.deps.db, t.deps, client.personId)).token;
    },
  });
  callers.push(sessionCaller('owner session', { type: 'session', role: 'owner' }, owner));
  (['admin', 'editor', 'viewer'] as const).forEach((role, index) => {
    callers.push(sessionCaller(`${role} session`, { type: 'session', role }, members[index]!));
  });
  callers.push(sessionCaller('person of another workspace', { type: 'stranger' }, stranger));

  return {
    workspaceId,
    collections,
    targets: {
      keyId: targetKey.id,
      serviceAccountId: targetAccount.id,
      personId: targetMember.personId,
      inviteId: invite.id,
      inviteToken: invite.token,
      webhookId: webhook.id,
      deliveryId: deliveries.data[0].id,
    },
    callers,
  };
}

/** Far enough ahead that the 1 h expiry and the 2 h grace have passed; sessions (7 days) still live. */
export const LATER_MS = 3 * HOUR_MS;
