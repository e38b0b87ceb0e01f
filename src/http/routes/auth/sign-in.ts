import { Type } from 'typebox';
import { signIn } from '../../../modules/sessions/sign-in.js';
import { OPEN } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { requestMeta } from '../../request-meta.js';
import { Email, Password, ResponseHeaders, SessionBody, withHeaders } from '../../schemas.js';
import { sessionBody, setSessionCookie } from '../../session-cookie.js';

export const registerSignIn: RegisterRoute = (app, deps) =>
  app.post('/v1/auth/sign-in', {
    config: { operation: 'auth.signIn', access: OPEN },
    schema: {
      summary: 'Sign in with email and password; sets the session cookie (plainbase_session, or __Host-plainbase_session over HTTPS)',
      tags: ['auth'],
      body: Type.Object({ email: Email, password: Password }, { additionalProperties: false, examples: [{ email: 'ada@example.com', password: 'correct horse battery staple' }] }),
      response: { 200: withHeaders(SessionBody, { 'Set-Cookie': ResponseHeaders.setSession }), 429: { $ref: 'Error#' } },
    },
    handler: async (request, reply) => {
      const { person, session } = await signIn(deps, request.body, requestMeta(request));
      setSessionCookie(deps, reply, session);
      return sessionBody(deps, person, session.expiresAt);
    },
  });
