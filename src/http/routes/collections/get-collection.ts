import { Type } from 'typebox';
import { countCollectionContents } from '../../../modules/collections/collection-contents.js';
import { findCollection, toCollectionView } from '../../../modules/collections/collections.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { Collection, COLLECTION_EXAMPLE, CollectionParams } from './collection-schemas.js';

const Contents = Type.Object(
  {
    records: Type.Integer({ description: 'Records not in its trash.' }),
    trashedRecords: Type.Integer({ description: 'Records in its trash.' }),
    files: Type.Integer({ description: 'Files uploaded to it.' }),
    fileBytes: Type.Integer({ description: 'Their total size, in bytes.' }),
  },
  { description: 'Only with ?contents=true: what deleting the collection for good would destroy.' },
);

export const registerGetCollection: RegisterRoute = (app, deps) =>
  app.get('/v1/collections/:col', {
    config: { operation: 'collections.get', access: needs('collections:read') },
    schema: {
      summary: 'A collection, by id or name (also when it is in the trash)',
      tags: ['collections'],
      params: CollectionParams,
      querystring: Type.Object(
        { contents: Type.Optional(Type.Boolean({ description: 'Also answer `contents`: how many records and files it holds, live and in its trash.' })) },
        { additionalProperties: false },
      ),
      response: {
        200: Type.Object(
          { ...Collection.properties, contents: Type.Optional(Contents) },
          { examples: [{ ...COLLECTION_EXAMPLE, contents: { records: 1200, trashedRecords: 3, files: 40, fileBytes: 5242880 } }] },
        ),
      },
    },
    handler: async (request) => {
      const { workspaceId } = inWorkspace(request);
      const row = await findCollection(deps.db, workspaceId, request.params.col, { includeTrashed: true });
      if (!request.query.contents) return toCollectionView(row);
      return { ...toCollectionView(row), contents: await countCollectionContents(deps.db, workspaceId, row.id) };
    },
  });
