import { Type } from 'typebox';
import { listPendingInvites } from '../../../modules/invites/invites.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { decodeCursor, idPosition, page } from '../../cursor.js';
import { listOf, Paging } from '../../schemas.js';
import { Invite } from './invite-schema.js';

export const registerListInvites: RegisterRoute = (app, deps) =>
  app.get('/v1/invites', {
    config: { operation: 'invites.list', access: needs('members:manage') },
    schema: {
      summary: 'Invites not yet accepted and not expired',
      tags: ['members'],
      querystring: Type.Object({ ...Paging }, { additionalProperties: false }),
      response: { 200: listOf(Invite) },
    },
    handler: async (request) => {
      const { limit = 50, cursor } = request.query;
      const rows = await listPendingInvites(deps, inWorkspace(request).workspaceId, { limit: limit + 1, before: decodeCursor(cursor, idPosition('inv')) });
      return page(rows, limit, (row) => row.id, deps.config.pageBytes);
    },
  });
