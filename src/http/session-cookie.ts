import type { FastifyReply } from 'fastify';
import type { Deps } from '../deps.js';
import { SESSION_COOKIE, type NewSession } from '../modules/sessions/sessions.js';
import type { Person } from '../modules/people/people.js';
import { listWorkspaces } from '../modules/workspaces/workspaces.js';

export function setSessionCookie(deps: Deps, reply: FastifyReply, session: NewSession): void {
  reply.setCookie(SESSION_COOKIE, session.token, {
    httpOnly: true,
    sameSite: 'lax',
    secure: deps.config.env !== 'development',
    path: '/',
    expires: new Date(session.expiresAt),
  });
}

export function clearSessionCookie(deps: Deps, reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'lax', secure: deps.config.env !== 'development', path: '/' });
}

/** The body of every answer that opens or describes a session. */
export async function sessionBody(deps: Deps, person: Person, expiresAt: string) {
  return { person, expiresAt, workspaces: await listWorkspaces(deps.db, person.id) };
}
