import { Type } from 'typebox';
import { listWorkspaces } from '../../../modules/workspaces/workspaces.js';
import { PERSON } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { signedInPerson } from '../../auth.js';
import { Workspace } from '../../schemas.js';

export const registerListWorkspaces: RegisterRoute = (app, deps) =>
  app.get('/v1/workspaces', {
    config: { operation: 'workspaces.list', access: PERSON },
    schema: {
      summary: 'The workspaces the signed-in person belongs to, with their role in each',
      tags: ['workspaces'],
      response: { 200: Type.Object({ data: Type.Array(Workspace), nextCursor: Type.Null() }) },
    },
    handler: async (request) => ({ data: await listWorkspaces(deps.db, signedInPerson(request).id), nextCursor: null }),
  });
