import { Type } from 'typebox';
import { revokeInvite } from '../../../modules/invites/invites.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { NoContent } from '../../schemas.js';
import { inWorkspace } from '../../auth.js';
import { requestMeta } from '../../request-meta.js';
import { idOf } from '../../schemas.js';

export const registerRevokeInvite: RegisterRoute = (app, deps) =>
  app.delete('/v1/invites/:inviteId', {
    config: { operation: 'invites.revoke', access: needs('members:manage') },
    schema: {
      summary: 'Withdraw an invite that was not accepted yet',
      tags: ['members'],
      params: Type.Object({ inviteId: idOf('inv') }),
      response: { 204: NoContent },
    },
    handler: async (request, reply) => {
      const { workspaceId, actor } = inWorkspace(request);
      await revokeInvite(deps, workspaceId, actor, request.params.inviteId, requestMeta(request));
      return reply.status(204).send(null);
    },
  });
