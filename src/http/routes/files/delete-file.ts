import { deleteFile } from '../../../modules/attachments/delete-file.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { collectionContext } from '../../collection-context.js';
import { NoContent } from '../../schemas.js';
import { FileParams } from './file-schemas.js';

export const registerDeleteFile: RegisterRoute = (app, deps) =>
  app.delete('/v1/collections/:col/files/:fil', {
    config: { operation: 'files.delete', access: needs('files:write') },
    schema: {
      summary: 'Delete a file, content included; records holding it let go of it (record.updated for each)',
      tags: ['files'],
      params: FileParams,
      response: { 204: NoContent },
    },
    handler: async (request, reply) => {
      await deleteFile(deps, collectionContext(request), request.params.col, request.params.fil);
      return reply.status(204).send(null);
    },
  });
