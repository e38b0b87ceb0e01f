import { Type } from 'typebox';
import { changeRole } from '../../../modules/members/members.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { requestMeta } from '../../request-meta.js';
import { AssignableRole } from '../../schemas.js';
import { Member, MemberParams } from './member-schema.js';

export const registerUpdateMember: RegisterRoute = (app, deps) =>
  app.patch('/v1/members/:personId', {
    config: { operation: 'members.update', access: needs('members:manage') },
    schema: {
      summary: "Change a member's role (never the owner's; see transfer-ownership)",
      tags: ['members'],
      params: MemberParams,
      body: Type.Object({ role: AssignableRole }, { additionalProperties: false, examples: [{ role: 'admin' }] }),
      response: { 200: Member },
    },
    handler: async (request) => {
      const { workspaceId, actor } = inWorkspace(request);
      return changeRole(deps, workspaceId, actor, request.params.personId, request.body.role, requestMeta(request));
    },
  });
