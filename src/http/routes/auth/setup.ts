import { Type } from 'typebox';
import { completeSetup, isSetupPending } from '../../../modules/setup/first-owner.js';
import { OPEN } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { requestMeta } from '../../request-meta.js';
import { DisplayName, Email, Password, ResponseHeaders, SessionBody, withHeaders } from '../../schemas.js';
import { sessionBody, setSessionCookie } from '../../session-cookie.js';

export const registerGetSetup: RegisterRoute = (app, deps) =>
  app.get('/v1/auth/setup', {
    config: { operation: 'auth.getSetup', access: OPEN },
    schema: {
      summary: 'Whether the first owner still has to be created',
      tags: ['auth'],
      response: { 200: Type.Object({ pending: Type.Boolean() }, { examples: [{ pending: true }] }) },
    },
    handler: async () => ({ pending: await isSetupPending(deps) }),
  });

export const registerCompleteSetup: RegisterRoute = (app, deps) =>
  app.post('/v1/auth/setup', {
    config: { operation: 'auth.completeSetup', access: OPEN },
    schema: {
      summary: 'Create the first owner with the token of the setup link printed at start',
      tags: ['auth'],
      body: Type.Object(
        { token: Type.String({ minLength: 1, maxLength: 200 }), email: Email, name: DisplayName, password: Password },
        { additionalProperties: false, examples: [{ token: 'the token of the printed setup link', email: 'ada@example.com', name: 'Ada Lovelace', password: 'correct horse battery staple' }] },
      ),
      response: { 201: withHeaders(SessionBody, { 'Set-Cookie': ResponseHeaders.setSession }) },
    },
    handler: async (request, reply) => {
      const { person, session } = await completeSetup(deps, request.body, requestMeta(request));
      setSessionCookie(deps, reply, session);
      return reply.status(201).send(await sessionBody(deps, person, session.expiresAt));
    },
  });
