import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Deps } from '../deps.js';
import type { NewSession } from '../modules/sessions/sessions.js';
import type { Person } from '../modules/people/people.js';
import { listWorkspaces } from '../modules/workspaces/workspaces.js';

/**
 * The session cookie's name. Served over HTTPS (PLAINBASE_PUBLIC_URL is https://), it carries the
 * `__Host-` prefix: browsers then keep it only if it is Secure, for Path=/ and with no Domain, so
 * no other site of the same domain (a sibling subdomain, a plain-http page on the network) can
 * set or overwrite it. Only the name the server sets is read: a `plainbase_session` cookie
 * planted beside it would otherwise be taken (session fixation).
 */
export function sessionCookieName(config: Pick<Config, 'publicUrl'>): string {
  return config.publicUrl.startsWith('https://') ? '__Host-plainbase_session' : 'plainbase_session';
}

/** The session token the request carries under this server's cookie name, if any. */
export function sessionTokenOf(deps: Deps, request: FastifyRequest): string | undefined {
  return request.cookies[sessionCookieName(deps.config)] || undefined;
}

/** A `__Host-` cookie must be Secure; otherwise Secure outside development, as before. */
function cookieOptions(deps: Deps) {
  const secure = deps.config.publicUrl.startsWith('https://') || deps.config.env !== 'development';
  return { httpOnly: true, sameSite: 'lax' as const, secure, path: '/' };
}

export function setSessionCookie(deps: Deps, reply: FastifyReply, session: NewSession): void {
  reply.setCookie(sessionCookieName(deps.config), session.token, { ...cookieOptions(deps), expires: new Date(session.expiresAt) });
}

export function clearSessionCookie(deps: Deps, reply: FastifyReply): void {
  reply.clearCookie(sessionCookieName(deps.config), cookieOptions(deps));
}

/** The body of every answer that opens or describes a session. */
export async function sessionBody(deps: Deps, person: Person, expiresAt: string) {
  return { person, expiresAt, workspaces: await listWorkspaces(deps.db, person.id) };
}
