import { Type } from 'typebox';
import { AssignableRole, EXAMPLE_TIME, exampleId, idOf, Timestamp } from '../../schemas.js';

const INVITE_EXAMPLE = {
  id: exampleId('inv'),
  email: 'grace@example.com',
  role: 'editor',
  createdAt: EXAMPLE_TIME,
  expiresAt: '2026-11-12T10:00:00.000Z',
  invitedBy: exampleId('per'),
};
/** The creating answer also carries the one-time token and link. */
export const INVITE_CREATED_EXAMPLE = { ...INVITE_EXAMPLE, token: 'q3Vt8Xk2bR5nW0yZ4aC7dF1gH6jL9mP2sT5vX8zB0eQ', url: 'https://plainbase.example.com/invite/q3Vt8Xk2bR5nW0yZ4aC7dF1gH6jL9mP2sT5vX8zB0eQ' };


export const Invite = Type.Object({
  id: idOf('inv'),
  email: Type.String(),
  role: AssignableRole,
  createdAt: Timestamp,
  expiresAt: Timestamp,
  invitedBy: Type.String(),
  token: Type.Optional(Type.String({ description: 'Only in the creating response.' })),
  url: Type.Optional(Type.String({ description: 'The link to pass to the invited person; only in the creating response.' })),
}, { examples: [INVITE_EXAMPLE] });

/** The invite's token as the credential in the path (accepting and reading the invite). */
export const InviteTokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });
