import { Type } from 'typebox';
import { endSession } from '../../../modules/sessions/end-sessions.js';
import { PERSON } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { signedInPerson } from '../../auth.js';
import { requestMeta } from '../../request-meta.js';
import { idOf, NoContent, ResponseHeaders, withHeaders } from '../../schemas.js';
import { clearSessionCookie, sessionTokenOf } from '../../session-cookie.js';

export const registerEndSession: RegisterRoute = (app, deps) =>
  app.delete('/v1/auth/sessions/:sessionId', {
    config: { operation: 'auth.endSession', access: PERSON },
    schema: {
      summary: "End one of the signed-in person's sessions (the calling one too: it is then signed out); another person's is 404",
      tags: ['auth'],
      params: Type.Object({ sessionId: idOf('ses') }),
      response: { 204: withHeaders(NoContent, { 'Set-Cookie': ResponseHeaders.clearSession }) },
    },
    handler: async (request, reply) => {
      const { current } = await endSession(deps, signedInPerson(request), request.params.sessionId, sessionTokenOf(deps, request)!, requestMeta(request));
      if (current) clearSessionCookie(deps, reply);
      return reply.status(204).send(null);
    },
  });
