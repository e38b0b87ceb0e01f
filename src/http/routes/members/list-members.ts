import { Type } from 'typebox';
import { listMembers } from '../../../modules/members/members.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { decodeCursor, page, timedPosition } from '../../cursor.js';
import { listOf, Paging } from '../../schemas.js';
import { Member } from './member-schema.js';

export const registerListMembers: RegisterRoute = (app, deps) =>
  app.get('/v1/members', {
    config: { operation: 'members.list', access: needs('members:read') },
    schema: {
      summary: "The workspace's members and their roles",
      tags: ['members'],
      querystring: Type.Object({ ...Paging }, { additionalProperties: false }),
      response: { 200: listOf(Member) },
    },
    handler: async (request) => {
      const { limit = 50, cursor } = request.query;
      const position = decodeCursor(cursor, MEMBER_POSITION.test);
      const after = position === undefined ? undefined : MEMBER_POSITION.read(position);
      const rows = await listMembers(deps, inWorkspace(request).workspaceId, { limit: limit + 1, after: after && { joinedAt: after.at, personId: after.key } });
      return page(rows, limit, (row) => MEMBER_POSITION.of(row.joinedAt, row.personId), deps.config.pageBytes);
    },
  });

// Members come in the order they joined: the cursor is the last one's join time and id.
const MEMBER_POSITION = timedPosition(/per_[0-9a-z]{26}/);
