import { Type } from 'typebox';
import { createInvite } from '../../../modules/invites/invites.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { requestMeta } from '../../request-meta.js';
import { AssignableRole, Email } from '../../schemas.js';
import { Invite, INVITE_CREATED_EXAMPLE } from './invite-schema.js';

export const registerCreateInvite: RegisterRoute = (app, deps) =>
  app.post('/v1/invites', {
    config: { operation: 'invites.create', access: needs('members:manage') },
    schema: {
      summary: 'Invite someone by email with a role; answers the one-time link (valid 7 days), no email is sent',
      tags: ['members'],
      body: Type.Object({ email: Email, role: AssignableRole }, { additionalProperties: false, examples: [{ email: 'grace@example.com', role: 'editor' }] }),
      response: { 201: { ...Invite, examples: [INVITE_CREATED_EXAMPLE] } },
    },
    handler: async (request, reply) => {
      const { workspaceId, actor } = inWorkspace(request);
      return reply.status(201).send(await createInvite(deps, workspaceId, actor, request.body, requestMeta(request)));
    },
  });
