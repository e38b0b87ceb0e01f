import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { roleAllows, SCOPES } from '../../../abilities.js';
import type { KeyManager } from '../../../modules/keys/keys.js';
import { inWorkspace } from '../../auth.js';
import { requestMeta } from '../../request-meta.js';
import { idOf, Timestamp } from '../../schemas.js';

export const ScopeName = Type.String({ enum: [...SCOPES], description: 'One of the twelve scopes.' });
export const KeyMode = Type.Union([Type.Literal('live'), Type.Literal('test')]);

export const Key = Type.Object({
  id: Type.String(),
  name: Type.String(),
  mode: KeyMode,
  preview: Type.String({ description: 'A masked form of the secret, to recognise it.' }),
  scopes: Type.Array(Type.String()),
  collections: Type.Union([Type.Array(Type.String()), Type.Null()]),
  expiresAt: Type.Union([Timestamp, Type.Null()]),
  serviceAccountId: Type.Union([Type.String(), Type.Null()]),
  createdBy: Type.String(),
  createdAt: Timestamp,
  lastUsedAt: Type.Union([Timestamp, Type.Null()], { description: 'Accurate to about a minute.' }),
  lastUsedIp: Type.Union([Type.String(), Type.Null()]),
  state: Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('revoked')]),
});

export const KeyWithSecret = Type.Object({
  ...Key.properties,
  secret: Type.String({ description: 'The token to send as "Authorization: Bearer …". Shown once: it cannot be read again.' }),
});

export const KeyParams = Type.Object({ key: idOf('key') });

/** The signed-in person managing keys: their own always, every key when their role manages keys. */
export function keyManager(request: FastifyRequest): KeyManager {
  const { workspaceId, person, role, actor } = inWorkspace(request);
  return { workspaceId, personId: person!.id, role, actor, meta: requestMeta(request), managesAll: roleAllows(role, 'keys:manage') };
}
