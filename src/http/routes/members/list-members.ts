import { Type } from 'typebox';
import { listMembers } from '../../../modules/members/members.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { Member } from './member-schema.js';

export const registerListMembers: RegisterRoute = (app, deps) =>
  app.get('/v1/members', {
    config: { operation: 'members.list', access: needs('members:read') },
    schema: {
      summary: "The workspace's members and their roles",
      tags: ['members'],
      response: { 200: Type.Object({ data: Type.Array(Member), nextCursor: Type.Null() }) },
    },
    handler: async (request) => ({ data: await listMembers(deps, inWorkspace(request).workspaceId), nextCursor: null }),
  });
