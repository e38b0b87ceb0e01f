import { deleteSession } from '../../../modules/sessions/sessions.js';
import { PERSON } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { NoContent, ResponseHeaders, withHeaders } from '../../schemas.js';
import { clearSessionCookie, sessionTokenOf } from '../../session-cookie.js';

export const registerSignOut: RegisterRoute = (app, deps) =>
  app.post('/v1/auth/sign-out', {
    config: { operation: 'auth.signOut', access: PERSON },
    schema: { summary: 'End the current session', tags: ['auth'], response: { 204: withHeaders(NoContent, { 'Set-Cookie': ResponseHeaders.clearSession }) } },
    handler: async (request, reply) => {
      await deleteSession(deps, sessionTokenOf(deps, request)!);
      clearSessionCookie(deps, reply);
      return reply.status(204).send(null);
    },
  });
