import { AppError } from '../../../errors.js';
import { findSession } from '../../../modules/sessions/sessions.js';
import { PERSON } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { signedInPerson } from '../../auth.js';
import { SessionBody } from '../../schemas.js';
import { sessionBody, sessionTokenOf } from '../../session-cookie.js';

export const registerGetSession: RegisterRoute = (app, deps) =>
  app.get('/v1/auth/session', {
    config: { operation: 'auth.getSession', access: PERSON },
    schema: { summary: 'The signed-in person and their workspaces', tags: ['auth'], response: { 200: SessionBody } },
    handler: async (request) => {
      const session = await findSession(deps, sessionTokenOf(deps, request)!);
      // Signed out (or expired) since the access check a moment ago.
      if (!session) throw new AppError('UNAUTHENTICATED', 'Your session has ended; sign in again.');
      return sessionBody(deps, signedInPerson(request), session.expiresAt);
    },
  });
