import { removeMember } from '../../../modules/members/members.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { NoContent } from '../../schemas.js';
import { inWorkspace } from '../../auth.js';
import { requestMeta } from '../../request-meta.js';
import { MemberParams } from './member-schema.js';

export const registerRemoveMember: RegisterRoute = (app, deps) =>
  app.delete('/v1/members/:personId', {
    config: { operation: 'members.remove', access: needs('members:manage') },
    schema: { summary: 'Remove a member from the workspace (never the owner)', tags: ['members'], params: MemberParams, response: { 204: NoContent } },
    handler: async (request, reply) => {
      const { workspaceId, actor } = inWorkspace(request);
      await removeMember(deps, workspaceId, actor, request.params.personId, requestMeta(request));
      return reply.status(204).send(null);
    },
  });
