import { Type } from 'typebox';
import { acceptInvite } from '../../../modules/invites/invites.js';
import { OPEN } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { requestMeta } from '../../request-meta.js';
import { DisplayName, Password, ResponseHeaders, SessionBody, withHeaders } from '../../schemas.js';
import { sessionBody, setSessionCookie } from '../../session-cookie.js';
import { InviteTokenParams } from './invite-schema.js';

export const registerAcceptInvite: RegisterRoute = (app, deps) =>
  app.post('/v1/invites/:token/accept', {
    // The token in the path is the credential.
    config: { operation: 'invites.accept', access: OPEN },
    schema: {
      summary: 'Accept an invite: a new person gives name and password, an existing one their password; signs in',
      tags: ['members'],
      params: InviteTokenParams,
      body: Type.Object({ name: Type.Optional(DisplayName), password: Password }, { additionalProperties: false, examples: [{ name: 'Grace Hopper', password: 'correct horse battery staple' }] }),
      response: { 200: withHeaders(SessionBody, { 'Set-Cookie': ResponseHeaders.setSession }) },
    },
    handler: async (request, reply) => {
      const { person, session } = await acceptInvite(deps, request.params.token, request.body, requestMeta(request));
      setSessionCookie(deps, reply, session);
      return sessionBody(deps, person, session.expiresAt);
    },
  });
