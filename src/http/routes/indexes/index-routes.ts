import { Type } from 'typebox';
import { createCollectionIndex, dropCollectionIndex, pageOfCollectionIndexes } from '../../../modules/indexes/indexes.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { decodeCursor, page, timedPosition } from '../../cursor.js';
import { listOf, NoContent, Paging } from '../../schemas.js';
import { CollectionParams, CollectionRef } from '../collections/collection-schemas.js';

const Index = Type.Object({ name: Type.String(), fields: Type.Array(Type.String()), unique: Type.Boolean() }, { examples: [{ name: 'by_email', fields: ['data.email'], unique: true }] });
const MANAGE = needs('indexes:manage');
// Indexes come oldest first: the cursor is the last one's creation time and name.
const INDEX_POSITION = timedPosition(/[a-z][a-z0-9_]{0,62}/);

export const registerListIndexes: RegisterRoute = (app, deps) =>
  app.get('/v1/collections/:col/indexes', {
    config: { operation: 'indexes.list', access: MANAGE },
    schema: {
      summary: "A collection's indexes, oldest first",
      tags: ['indexes'],
      params: CollectionParams,
      querystring: Type.Object({ ...Paging }, { additionalProperties: false }),
      response: { 200: listOf(Index) },
    },
    handler: async (request) => {
      const { workspaceId } = inWorkspace(request);
      const { limit = 50, cursor } = request.query;
      const position = decodeCursor(cursor, INDEX_POSITION.test);
      const after = position === undefined ? undefined : INDEX_POSITION.read(position);
      const rows = await pageOfCollectionIndexes(deps, workspaceId, request.params.col, { limit: limit + 1, after: after && { createdAt: after.at, name: after.key } });
      return page(rows, limit, (row) => INDEX_POSITION.of(row.createdAt, row.name), deps.config.pageBytes);
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
        { additionalProperties: false, examples: [{ name: 'by_email', fields: ['data.email'], unique: true }] },
      ),
      response: { 201: Index },
    },
    handler: async (request, reply) => {
      const { workspaceId } = inWorkspace(request);
      const { name, fields, unique = false } = request.body;
      const index = await createCollectionIndex(deps, workspaceId, request.params.col, { name, fields, unique });
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
      await dropCollectionIndex(deps, workspaceId, request.params.col, request.params.name);
      return reply.status(204).send(null);
    },
  });
