import { Type } from 'typebox';
import { trashCollection } from '../../../modules/collections/collections.js';
import { purgeCollection } from '../../../modules/collection-purge/purge-collection.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { collectionContext } from '../../collection-context.js';
import { NoContent } from '../../schemas.js';
import { Collection, CollectionParams } from './collection-schemas.js';

export const registerDeleteCollection: RegisterRoute = (app, deps) =>
  app.delete('/v1/collections/:col', {
    config: { operation: 'collections.delete', access: needs('collections:delete') },
    schema: {
      summary: 'Move a collection to the trash (emits collection.deleted); ?permanent=true deletes it and everything in it for good',
      tags: ['collections'],
      params: CollectionParams,
      querystring: Type.Object({ permanent: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
      response: { 200: Collection, 204: NoContent },
    },
    handler: async (request, reply) => {
      const context = collectionContext(request);
      if (!request.query.permanent) return trashCollection(deps, context, request.params.col);
      await purgeCollection(deps, context, request.params.col);
      return reply.status(204).send(null);
    },
  });
