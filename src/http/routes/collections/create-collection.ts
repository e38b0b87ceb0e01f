import { Type } from 'typebox';
import { createCollection } from '../../../modules/collections/collections.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { collectionContext } from '../../collection-context.js';
import { Collection, CollectionName, Settings } from './collection-schemas.js';

export const registerCreateCollection: RegisterRoute = (app, deps) =>
  app.post('/v1/collections', {
    config: { operation: 'collections.create', access: needs('collections:create') },
    schema: {
      summary: 'Create a collection (emits collection.created)',
      tags: ['collections'],
      body: Type.Object(
        { name: CollectionName, public: Type.Optional(Type.Boolean()), settings: Type.Optional(Settings) },
        { additionalProperties: false, examples: [{ name: 'leads', public: false, settings: { description: 'Sign-ups from the landing page' } }] },
      ),
      response: { 201: Collection },
    },
    handler: async (request, reply) => reply.status(201).send(await createCollection(deps, collectionContext(request), request.body)),
  });
