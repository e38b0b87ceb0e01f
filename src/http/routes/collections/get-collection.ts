import { findCollection, toCollectionView } from '../../../modules/collections/collections.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { Collection, CollectionParams } from './collection-schemas.js';

export const registerGetCollection: RegisterRoute = (app, deps) =>
  app.get('/v1/collections/:col', {
    config: { operation: 'collections.get', access: needs('collections:read') },
    schema: { summary: 'A collection, by id or name (also when it is in the trash)', tags: ['collections'], params: CollectionParams, response: { 200: Collection } },
    handler: async (request) =>
      toCollectionView(await findCollection(deps.db, inWorkspace(request).workspaceId, request.params.col, { includeTrashed: true })),
  });
