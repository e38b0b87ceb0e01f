import { Type } from 'typebox';
import { changePassword } from '../../../modules/sessions/change-password.js';
import { PERSON } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { signedInPerson } from '../../auth.js';
import { requestMeta } from '../../request-meta.js';
import { NoContent, Password } from '../../schemas.js';
import { sessionTokenOf } from '../../session-cookie.js';

export const registerChangePassword: RegisterRoute = (app, deps) =>
  app.post('/v1/auth/password', {
    config: { operation: 'auth.changePassword', access: PERSON },
    schema: {
      summary: "Change the signed-in person's password (the current one is needed); ends their other sessions",
      tags: ['auth'],
      body: Type.Object({ currentPassword: Password, newPassword: Password }, { additionalProperties: false, examples: [{ currentPassword: 'correct horse battery staple', newPassword: 'a longer and newer passphrase' }] }),
      response: { 204: NoContent },
    },
    handler: async (request, reply) => {
      await changePassword(deps, signedInPerson(request), sessionTokenOf(deps, request)!, request.body, requestMeta(request));
      return reply.status(204).send(null);
    },
  });
