import { Type } from 'typebox';
import { AssignableRole, idOf, Timestamp } from '../../schemas.js';

export const Invite = Type.Object({
  id: idOf('inv'),
  email: Type.String(),
  role: AssignableRole,
  createdAt: Timestamp,
  expiresAt: Timestamp,
  invitedBy: Type.String(),
  token: Type.Optional(Type.String({ description: 'Only in the creating response.' })),
  url: Type.Optional(Type.String({ description: 'The link to pass to the invited person; only in the creating response.' })),
});

/** The invite's token as the credential in the path (accepting and reading the invite). */
export const InviteTokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });
