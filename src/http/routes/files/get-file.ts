import { getFile, toFileView } from '../../../modules/files/files.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { readScope } from '../../public-read.js';
import { FileBody, FileParams } from './file-schemas.js';

export const registerGetFile: RegisterRoute = (app, deps) =>
  app.get('/v1/collections/:col/files/:fil', {
    config: { operation: 'files.get', access: needs('files:read', { publicRead: true }) },
    schema: { summary: "A file's metadata: name, size, content type, SHA-256", tags: ['files'], params: FileParams, response: { 200: FileBody } },
    handler: async (request) => {
      const anonymous = request.auth.workspaceId === null;
      const scope = await readScope(deps, request, request.params.col);
      return toFileView(await getFile(deps, scope.workspaceId, scope.collection, request.params.fil, { attachedOnly: anonymous }));
    },
  });
