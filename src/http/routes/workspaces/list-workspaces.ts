import { Type } from 'typebox';
import { listWorkspaces } from '../../../modules/workspaces/workspaces.js';
import { PERSON } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { signedInPerson } from '../../auth.js';
import { decodeCursor, idPosition, page } from '../../cursor.js';
import { listOf, Paging, Workspace } from '../../schemas.js';

export const registerListWorkspaces: RegisterRoute = (app, deps) =>
  app.get('/v1/workspaces', {
    config: { operation: 'workspaces.list', access: PERSON },
    schema: {
      summary: 'The workspaces the signed-in person belongs to, with their role in each',
      tags: ['workspaces'],
      querystring: Type.Object({ ...Paging }, { additionalProperties: false }),
      response: { 200: listOf(Workspace) },
    },
    handler: async (request) => {
      const { limit = 50, cursor } = request.query;
      const rows = await listWorkspaces(deps.db, signedInPerson(request).id, { limit: limit + 1, after: decodeCursor(cursor, idPosition('ws')) });
      return page(rows, limit, (row) => row.id, deps.config.pageBytes);
    },
  });
