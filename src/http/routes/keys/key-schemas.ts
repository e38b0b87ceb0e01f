import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { roleAllows, SCOPES } from '../../../abilities.js';
import type { KeyManager } from '../../../modules/keys/keys.js';
import { inWorkspace } from '../../auth.js';
import { requestMeta } from '../../request-meta.js';
import { EXAMPLE_TIME, exampleId, idOf, StringEnum, Timestamp } from '../../schemas.js';

export const ScopeName = StringEnum(SCOPES, { description: 'One of the twelve scopes.' });

const KEY_EXAMPLE = {
  id: exampleId('key'),
  name: 'nightly import',
  mode: 'live',
  preview: 'pb_live_01jbx3m9k6t2v8w4y7z0a5c1d3_…cE1h',
  scopes: ['records:read', 'records:create'],
  collections: null,
  expiresAt: null,
  serviceAccountId: null,
  createdBy: exampleId('per'),
  createdAt: EXAMPLE_TIME,
  lastUsedAt: '2026-11-05T11:00:00.000Z',
  lastUsedIp: '203.0.113.7',
  state: 'active',
};
export const KeyMode = StringEnum(['live', 'test'], { description: 'live, or test: a pb_test_ key, to tell test traffic apart.' });

export const Key = Type.Object({
  id: Type.String(),
  name: Type.String(),
  mode: KeyMode,
  preview: Type.String({ description: 'A masked form of the secret, to recognise it.' }),
  scopes: Type.Array(ScopeName),
  collections: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'The collection ids the key is restricted to; null for every collection.' }),
  expiresAt: Type.Union([Timestamp, Type.Null()]),
  serviceAccountId: Type.Union([Type.String(), Type.Null()]),
  createdBy: Type.String(),
  createdAt: Timestamp,
  lastUsedAt: Type.Union([Timestamp, Type.Null()], { description: 'Accurate to about a minute.' }),
  lastUsedIp: Type.Union([Type.String(), Type.Null()]),
  state: StringEnum(['active', 'expired', 'revoked']),
}, { examples: [KEY_EXAMPLE] });

export const KeyWithSecret = Type.Object({
  ...Key.properties,
  secret: Type.String({ description: 'The token to send as "Authorization: Bearer …". Shown once: it cannot be read again.' }),
}, { examples: [{ ...KEY_EXAMPLE, lastUsedAt: null, lastUsedIp: null, secret: 'pb_live_01jbx3m9k6t2v8w4y7z0a5c1d3_Xk2bR5nW0yZ4aC7dF1gH6jL9mP2sT5vX8zB0eQ3rU6wY9cE1h' }] });

export const KeyParams = Type.Object({ key: idOf('key') });

/** The signed-in person managing keys: their own always, every key when their role manages keys. */
export function keyManager(request: FastifyRequest): KeyManager {
  const { workspaceId, person, role, actor } = inWorkspace(request);
  return { workspaceId, personId: person!.id, role, actor, meta: requestMeta(request), managesAll: roleAllows(role, 'keys:manage') };
}
