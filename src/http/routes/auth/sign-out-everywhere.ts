import { Type } from 'typebox';
import { signOutEverywhere } from '../../../modules/sessions/end-sessions.js';
import { PERSON } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { signedInPerson } from '../../auth.js';
import { requestMeta } from '../../request-meta.js';
import { ResponseHeaders, withHeaders } from '../../schemas.js';
import { clearSessionCookie, sessionTokenOf } from '../../session-cookie.js';

const Ended = Type.Object({ ended: Type.Integer({ minimum: 0, description: 'How many sessions ended.' }) }, { examples: [{ ended: 3 }] });

export const registerSignOutEverywhere: RegisterRoute = (app, deps) =>
  app.post('/v1/auth/sign-out-everywhere', {
    config: { operation: 'auth.signOutEverywhere', access: PERSON },
    schema: {
      summary: "End every session of the signed-in person, the calling one included; with {keepCurrent: true} every one but the calling one",
      tags: ['auth'],
      body: Type.Optional(
        Type.Object(
          { keepCurrent: Type.Optional(Type.Boolean({ default: false, description: 'Keep the calling session signed in.' })) },
          { additionalProperties: false, examples: [{}, { keepCurrent: true }] },
        ),
      ),
      response: { 200: withHeaders(Ended, { 'Set-Cookie': ResponseHeaders.clearSession }) },
    },
    handler: async (request, reply) => {
      const keepCurrent = request.body?.keepCurrent === true;
      const ended = await signOutEverywhere(deps, signedInPerson(request), sessionTokenOf(deps, request)!, keepCurrent, requestMeta(request));
      if (!keepCurrent) clearSessionCookie(deps, reply);
      return { ended };
    },
  });
