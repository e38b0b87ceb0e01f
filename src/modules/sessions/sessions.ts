import { sql, type SqlBool } from 'kysely';
import type { Deps } from '../../deps.js';
import { directQuery } from '../../db/direct-query.js';
import type { ExpiringRows } from '../../db/expiring-rows.js';
import type { Executor } from '../../db/schema.js';
import { newId } from '../../ids.js';
import { randomToken, sha256Hex } from '../../secrets.js';
import type { Person } from '../people/people.js';

/**
 * A session's last use is written at most this often: a signed-in dashboard makes many requests
 * a minute, and a write for each would cost more than the idle limit (minutes to days) needs.
 */
export const LAST_USE_PRECISION_MS = 60_000;

export interface NewSession {
  token: string;
  expiresAt: string;
}

/** Where a request comes from, as a session remembers its last use. */
export interface SessionUse {
  ip: string | null;
  userAgent: string | null;
}

/** Sessions opened outside any request (tests, tools) come from nowhere in particular. */
const NO_USE: SessionUse = { ip: null, userAgent: null };

export async function createSession(executor: Executor, deps: Deps, personId: string, use: SessionUse = NO_USE): Promise<NewSession> {
  const now = deps.clock.now();
  const token = randomToken();
  const expiresAt = new Date(now.getTime() + deps.config.sessionTtlSeconds * 1000).toISOString();
  await executor
    .insertInto('sessions')
    .values({
      token_hash: sha256Hex(token),
      id: newId('ses', now.getTime()),
      person_id: personId,
      created_at: now.toISOString(),
      expires_at: expiresAt,
      last_used_at: now.toISOString(),
      ip: use.ip,
      user_agent: use.userAgent,
    })
    .execute();
  return { token, expiresAt };
}

/** A session's person, by the digest of its token; on every signed-in request (db/direct-query.ts). */
const findSessionByTokenHash = directQuery<{ id: string; email: string; name: string; expires_at: string; last_used_at: string }>('plainbase_find_session_used', (parameter) => `
  select p.id, p.email, p.name, s.expires_at, s.last_used_at
  from sessions s
  join people p on p.id = s.person_id
  where s.token_hash = ${parameter(1)}`);

/** The last use before which a session has ended for want of use, or null when sessions never idle out. */
function idleCutoff(deps: Deps, now: Date): string | null {
  const idleSeconds = deps.config.sessionIdleSeconds;
  return idleSeconds === 0 ? null : new Date(now.getTime() - idleSeconds * 1000).toISOString();
}

/**
 * The person behind a session cookie, or null when the session is unknown, has expired, or has
 * not been used for PLAINBASE_SESSION_IDLE_MINUTES. Given `use` (a request that uses the session),
 * records the use when the last one recorded is a minute old or more.
 */
export async function findSession(deps: Deps, token: string, use?: SessionUse): Promise<{ person: Person; expiresAt: string } | null> {
  const tokenHash = sha256Hex(token);
  const [row] = await findSessionByTokenHash.run(deps.db, [tokenHash]);
  const now = deps.clock.now();
  const nowIso = now.toISOString();
  if (!row || row.expires_at <= nowIso) return null;
  const cutoff = idleCutoff(deps, now);
  if (cutoff !== null && row.last_used_at <= cutoff) return null;
  if (use && Date.parse(row.last_used_at) <= now.getTime() - LAST_USE_PRECISION_MS) await recordUse(deps, tokenHash, now, use);
  return { person: { id: row.id, email: row.email, name: row.name }, expiresAt: row.expires_at };
}

/** Conditional, so that concurrent requests of one session write its use once, not once each. */
async function recordUse(deps: Deps, tokenHash: string, now: Date, use: SessionUse): Promise<void> {
  await deps.db
    .updateTable('sessions')
    .set({ last_used_at: now.toISOString(), ip: use.ip, user_agent: use.userAgent })
    .where('token_hash', '=', tokenHash)
    .where('last_used_at', '<=', new Date(now.getTime() - LAST_USE_PRECISION_MS).toISOString())
    .execute();
}

/** One of a person's sessions as its person sees it: never its token. */
export interface SessionSummary {
  id: string;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
  ip: string | null;
  userAgent: string | null;
  current: boolean;
}

/** A person's live sessions in the order they were opened, after the session `after` (an id). */
export async function listSessions(deps: Deps, personId: string, currentToken: string, page: { limit: number; after?: string }): Promise<SessionSummary[]> {
  const now = deps.clock.now();
  const cutoff = idleCutoff(deps, now);
  let query = deps.db
    .selectFrom('sessions')
    .select(['id', 'token_hash', 'created_at', 'last_used_at', 'expires_at', 'ip', 'user_agent'])
    .where('person_id', '=', personId)
    .where('expires_at', '>', now.toISOString());
  if (cutoff !== null) query = query.where('last_used_at', '>', cutoff);
  if (page.after !== undefined) query = query.where('id', '>', page.after);
  const rows = await query.orderBy('id').limit(page.limit).execute();
  const currentHash = sha256Hex(currentToken);
  return rows.map((row) => ({
    id: row.id,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    expiresAt: row.expires_at,
    ip: row.ip,
    userAgent: row.user_agent,
    current: row.token_hash === currentHash,
  }));
}

/**
 * Ends one of the person's sessions by its id: answers whether it was there to end, and whether
 * it was the session of `currentToken`. Another person's session is, to this person, not there.
 */
export async function deleteSessionOf(executor: Executor, personId: string, sessionId: string, currentToken: string): Promise<{ ended: boolean; current: boolean }> {
  const row = await executor
    .deleteFrom('sessions')
    .where('person_id', '=', personId)
    .where('id', '=', sessionId)
    .returning('token_hash')
    .executeTakeFirst();
  return { ended: row !== undefined, current: row?.token_hash === sha256Hex(currentToken) };
}

/** Ends every session of a person, or every one but that of `keepToken`: answers how many. */
export async function deleteSessionsOf(executor: Executor, personId: string, keepToken: string | null): Promise<number> {
  let query = executor.deleteFrom('sessions').where('person_id', '=', personId);
  if (keepToken !== null) query = query.where('token_hash', '!=', sha256Hex(keepToken));
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function deleteSession(deps: Deps, token: string): Promise<void> {
  await deps.db.deleteFrom('sessions').where('token_hash', '=', sha256Hex(token)).execute();
}

/** Ends every session of a person but the one of `keepToken` (a password change): answers how many. */
export async function endOtherSessions(executor: Executor, personId: string, keepToken: string): Promise<number> {
  return deleteSessionsOf(executor, personId, keepToken);
}

/** Sessions past their lifetime, or unused past PLAINBASE_SESSION_IDLE_MINUTES, for housekeeping to delete. */
export const expiredSessions = (deps: Deps): ExpiringRows => ({
  name: 'sessions',
  table: 'sessions',
  key: ['token_hash'],
  expired: (now) => {
    const cutoff = idleCutoff(deps, now);
    const pastLifetime = sql<SqlBool>`expires_at <= ${now.toISOString()}`;
    return cutoff === null ? pastLifetime : sql<SqlBool>`(${pastLifetime} or last_used_at <= ${cutoff})`;
  },
});
