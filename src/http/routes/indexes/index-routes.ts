import { Type } from 'typebox';
import { findCollection } from '../../../modules/collections/collections.js';
import { createIndex, dropIndex, listIndexes } from '../../../modules/indexes/indexes.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { NoContent } from '../../schemas.js';
import { CollectionParams, CollectionRef } from '../collections/collection-schemas.js';

const Index = Type.Object({ name: Type.String(), fields: Type.Array(Type.String()), unique: Type.Boolean() });
const MANAGE = needs('indexes:manage');

export const registerListIndexes: RegisterRoute = (app, deps) =>
  app.get('/v1/collections/:col/indexes', {
    config: { operation: 'indexes.list', access: MANAGE },
    schema: { summary: "A collection's indexes", tags: ['indexes'], params: CollectionParams, response: { 200: Type.Object({ data: Type.Array(Index), nextCursor: Type.Null() }) } },
    handler: async (request) => {
      const { workspaceId } = inWorkspace(request);
      const collection = await findCollection(deps.db, workspaceId, request.params.col);
      return { data: await listIndexes(deps.db, workspaceId, collection.id), nextCursor: null };
    },
  });

export const registerCreateIndex: RegisterRoute = (app, deps) =>
  app.post('/v1/collections/:col/indexes', {
    config: { operation: 'indexes.create', access: MANAGE },
    schema: {
      summary: 'Index one to four record fields, optionally unique (then a duplicate write answers 409)',
      tags: ['indexes'],
      params: CollectionParams,
      body: Type.Object(
        {
          name: Type.String({ pattern: '^[a-z][a-z0-9_]{0,62}$' }),
          fields: Type.Array(Type.String({ maxLength: 200 }), { minItems: 1, maxItems: 4, description: 'Like ["data.email"]; also createdAt, updatedAt.' }),
          unique: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
      response: { 201: Index },
    },
    handler: async (request, reply) => {
      const { workspaceId } = inWorkspace(request);
      const index = await deps.db.transaction().execute(async (trx) => {
        const collection = await findCollection(trx, workspaceId, request.params.col);
        return createIndex(trx, deps.dialect, {
          workspaceId,
          collectionId: collection.id,
          name: request.body.name,
          fields: request.body.fields,
          unique: request.body.unique ?? false,
          now: deps.clock.now(),
        });
      });
      return reply.status(201).send(index);
    },
  });

export const registerDeleteIndex: RegisterRoute = (app, deps) =>
  app.delete('/v1/collections/:col/indexes/:name', {
    config: { operation: 'indexes.delete', access: MANAGE },
    schema: {
      summary: 'Remove an index',
      tags: ['indexes'],
      params: Type.Object({ col: CollectionRef, name: Type.String({ pattern: '^[a-z][a-z0-9_]{0,62}$' }) }),
      response: { 204: NoContent },
    },
    handler: async (request, reply) => {
      const { workspaceId } = inWorkspace(request);
      await deps.db.transaction().execute(async (trx) => {
        const collection = await findCollection(trx, workspaceId, request.params.col);
        await dropIndex(trx, deps.dialect, workspaceId, collection.id, request.params.name);
      });
      return reply.status(204).send(null);
    },
  });
