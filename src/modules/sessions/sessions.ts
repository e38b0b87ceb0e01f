import type { Deps } from '../../deps.js';
import { directQuery } from '../../db/direct-query.js';
import type { Executor } from '../../db/schema.js';
import { randomToken, sha256Hex } from '../../secrets.js';
import type { Person } from '../people/people.js';

export const SESSION_COOKIE = 'plainbase_session';

export interface NewSession {
  token: string;
  expiresAt: string;
}

export async function createSession(executor: Executor, deps: Deps, personId: string): Promise<NewSession> {
  const now = deps.clock.now();
  const token = randomToken();
  const expiresAt = new Date(now.getTime() + deps.config.sessionTtlSeconds * 1000).toISOString();
  await executor
    .insertInto('sessions')
    .values({ token_hash: sha256Hex(token), person_id: personId, created_at: now.toISOString(), expires_at: expiresAt })
    .execute();
  return { token, expiresAt };
}

/** A session's person, by the digest of its token; on every signed-in request (db/direct-query.ts). */
const findSessionByTokenHash = directQuery<{ id: string; email: string; name: string; expires_at: string }>('plainbase_find_session', (parameter) => `
  select p.id, p.email, p.name, s.expires_at
  from sessions s
  join people p on p.id = s.person_id
  where s.token_hash = ${parameter(1)}`);

/** The person behind a session cookie, or null when the session is unknown or has expired. */
export async function findSession(deps: Deps, token: string): Promise<{ person: Person; expiresAt: string } | null> {
  const [row] = await findSessionByTokenHash.run(deps.db, [sha256Hex(token)]);
  if (!row || row.expires_at <= deps.clock.now().toISOString()) return null;
  return { person: { id: row.id, email: row.email, name: row.name }, expiresAt: row.expires_at };
}

export async function deleteSession(deps: Deps, token: string): Promise<void> {
  await deps.db.deleteFrom('sessions').where('token_hash', '=', sha256Hex(token)).execute();
}

/** Ends every session of a person but the one of `keepToken` (a password change): answers how many. */
export async function endOtherSessions(executor: Executor, personId: string, keepToken: string): Promise<number> {
  const result = await executor.deleteFrom('sessions').where('person_id', '=', personId).where('token_hash', '!=', sha256Hex(keepToken)).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function purgeExpiredSessions(deps: Deps): Promise<void> {
  await deps.db.deleteFrom('sessions').where('expires_at', '<=', deps.clock.now().toISOString()).execute();
}
