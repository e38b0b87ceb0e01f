import { Type } from 'typebox';
import { listPendingInvites } from '../../../modules/invites/invites.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { Invite } from './invite-schema.js';

export const registerListInvites: RegisterRoute = (app, deps) =>
  app.get('/v1/invites', {
    config: { operation: 'invites.list', access: needs('members:manage') },
    schema: {
      summary: 'Invites not yet accepted and not expired',
      tags: ['members'],
      response: { 200: Type.Object({ data: Type.Array(Invite), nextCursor: Type.Null() }) },
    },
    handler: async (request) => ({ data: await listPendingInvites(deps, inWorkspace(request).workspaceId), nextCursor: null }),
  });
