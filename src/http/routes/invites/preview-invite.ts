import { Type } from 'typebox';
import { previewInvite } from '../../../modules/invites/invites.js';
import { OPEN } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { AssignableRole, EXAMPLE_LATER, Timestamp } from '../../schemas.js';
import { InviteTokenParams } from './invite-schema.js';

export const registerPreviewInvite: RegisterRoute = (app, deps) =>
  // The accept address itself: what accepting would do (GET), then doing it (POST). The token in
  // the path is the credential, as for accepting, and logs show it as [redacted].
  app.get('/v1/invites/:token/accept', {
    config: { operation: 'invites.preview', access: OPEN },
    schema: {
      summary: 'Read an invite by its token: which workspace, who invited, which email and role',
      description:
        'For the page that accepts an invite: answers what the link already grants and nothing more (no ids, no token). ' +
        'An unknown, used, revoked or expired token is 404 NOT_FOUND, the same answer accepting gives.',
      tags: ['members'],
      params: InviteTokenParams,
      response: {
        200: Type.Object({
          workspaceName: Type.String(),
          inviterName: Type.Union([Type.String(), Type.Null()], { description: 'Null when the person who invited no longer exists.' }),
          email: Type.String(),
          role: AssignableRole,
          expiresAt: Timestamp,
        }, { examples: [{ workspaceName: 'Acme research', inviterName: 'Ada Lovelace', email: 'grace@example.com', role: 'editor', expiresAt: EXAMPLE_LATER }] }),
      },
    },
    handler: async (request) => previewInvite(deps, request.params.token),
  });
