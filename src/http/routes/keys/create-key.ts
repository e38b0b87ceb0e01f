import { Type } from 'typebox';
import type { Scope } from '../../../abilities.js';
import { createKey } from '../../../modules/keys/keys.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { DisplayName, idOf, Timestamp } from '../../schemas.js';
import { CollectionRef } from '../collections/collection-schemas.js';
import { KeyMode, KeyWithSecret, keyManager, ScopeName } from './key-schemas.js';

export const registerCreateKey: RegisterRoute = (app, deps) =>
  app.post('/v1/keys', {
    config: { operation: 'keys.create', access: needs('keys:create-own') },
    schema: {
      summary: 'Create an API key; its secret is in this response only',
      tags: ['keys'],
      body: Type.Object(
        {
          name: DisplayName,
          scopes: Type.Array(ScopeName, { minItems: 1, maxItems: 12 }),
          expiresAt: Type.Optional(Timestamp),
          collections: Type.Optional(Type.Array(CollectionRef, { minItems: 1, maxItems: 100, description: 'Restrict the key to these collections (ids or names).' })),
          serviceAccountId: Type.Optional(idOf('sa')),
          mode: Type.Optional(KeyMode),
        },
        { additionalProperties: false, examples: [{ name: 'nightly import', scopes: ['records:read', 'records:create'] }] },
      ),
      response: { 201: KeyWithSecret },
    },
    handler: async (request, reply) => {
      // The schema admits only the twelve scope names.
      const { key, secret } = await createKey(deps, keyManager(request), { ...request.body, scopes: request.body.scopes as Scope[] });
      return reply.status(201).send({ ...key, secret });
    },
  });
