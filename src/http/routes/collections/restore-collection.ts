import { restoreCollection } from '../../../modules/collections/collections.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { collectionContext } from '../../collection-context.js';
import { Collection, CollectionParams } from './collection-schemas.js';

export const registerRestoreCollection: RegisterRoute = (app, deps) =>
  app.post('/v1/collections/:col/restore', {
    config: { operation: 'collections.restore', access: needs('collections:delete') },
    schema: { summary: 'Bring a collection back from the trash (emits collection.restored)', tags: ['collections'], params: CollectionParams, response: { 200: Collection } },
    handler: async (request) => restoreCollection(deps, collectionContext(request), request.params.col),
  });
