import { Type } from 'typebox';
import { listSessions } from '../../../modules/sessions/sessions.js';
import { PERSON } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { signedInPerson } from '../../auth.js';
import { decodeCursor, idPosition, page } from '../../cursor.js';
import { listOf, Paging } from '../../schemas.js';
import { sessionTokenOf } from '../../session-cookie.js';
import { Session } from './session-schemas.js';

export const registerListSessions: RegisterRoute = (app, deps) =>
  app.get('/v1/auth/sessions', {
    config: { operation: 'auth.listSessions', access: PERSON },
    schema: {
      summary: "The signed-in person's live sessions, oldest first, the calling one marked current",
      tags: ['auth'],
      querystring: Type.Object({ ...Paging }, { additionalProperties: false }),
      response: { 200: listOf(Session) },
    },
    handler: async (request) => {
      const { limit = 50, cursor } = request.query;
      const after = decodeCursor(cursor, idPosition('ses'));
      const rows = await listSessions(deps, signedInPerson(request).id, sessionTokenOf(deps, request)!, { limit: limit + 1, ...(after ? { after } : {}) });
      return page(rows, limit, (row) => row.id, deps.config.pageBytes);
    },
  });
