import { Type } from 'typebox';
import { updateCollection } from '../../../modules/collections/collections.js';
import { startSearchBuilds } from '../../../modules/search/search-builds.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { collectionContext } from '../../collection-context.js';
import { Collection, CollectionName, CollectionParams, Settings } from './collection-schemas.js';

export const registerUpdateCollection: RegisterRoute = (app, deps) =>
  app.patch('/v1/collections/:col', {
    config: { operation: 'collections.update', access: needs('collections:update') },
    schema: {
      summary: "Rename a collection, make it public or private, change its settings (emits collection.updated)",
      tags: ['collections'],
      params: CollectionParams,
      body: Type.Object(
        { name: Type.Optional(CollectionName), public: Type.Optional(Type.Boolean()), settings: Type.Optional(Settings) },
        { additionalProperties: false, minProperties: 1, examples: [{ public: true }] },
      ),
      response: { 200: Collection },
    },
    handler: async (request) => {
      const collection = await updateCollection(deps, collectionContext(request), request.params.col, request.body);
      // New searchFields: their index is built in the background (search-builds.ts).
      if (collection.search?.state === 'building' || request.body.settings?.searchFields !== undefined) startSearchBuilds(deps, (error) => request.log.error({ err: error }, 'building a search index failed'));
      return collection;
    },
  });
