import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../db/schema.js';
import { LruMap } from '../../lru-map.js';

/**
 * A key's rows as this process last read them, used as a guess so that a request need not read
 * them first, where each statement is a round trip (Dialect.statementsRoundTrip: PostgreSQL).
 *
 * A guess is never an answer. A request that starts on one carries a KeyGuess, and every
 * statement it runs either carries the key guard (below), which makes the statement do nothing
 * unless the key still reads as guessed at the moment it runs, or runs only after
 * `confirm()`, the full check against the database. So a key revoked, rotated or demoted through
 * any process is refused on its next request, as without the guess; the request's own statement
 * is what checks it, in the same round trip. The same idea, for collections, is
 * collections/remembered-collections.ts.
 *
 * Only a guess that passes every check is used (the secret's hash, expiry, the route's ability):
 * a guess never refuses anything, the full check does.
 */
export interface KeyGuess {
  readonly guard: KeyGuard;
  /** A statement carrying the guard answered: the key was as guessed, and the request is checked. */
  held(): void;
  /** The full check, before work that does not carry the guard; refusals are thrown. Runs once. */
  confirm(): Promise<void>;
  /** Whether the guess has been held or confirmed. */
  readonly settled: boolean;
}

/** What a guessed caller was made from, and what the guard finds unchanged. */
export interface KeyGuard {
  keyId: string;
  workspaceId: string;
  name: string;
  scopes: string;
  expiresAt: string | null;
  /** The hash of the request's secret: one of the key's secrets, still live. */
  secretHash: string;
  /** The time the secret must still be live at (the request's clock). */
  now: string;
  role: string;
}

/** Keys whose rows are kept per database; past it the least recently used goes first. */
const CAPACITY = 10_000;
const remembered = new WeakMap<Db, LruMap<string, unknown[]>>();

/** The key's rows as last read by this process, if any. */
export const rememberedKeyRows = <Row>(db: Db, keyId: string): Row[] | undefined => remembered.get(db)?.get(keyId) as Row[] | undefined;

/** Keeps rows the full check just read and accepted, as the next request's guess. */
export function rememberKeyRows(db: Db, keyId: string, rows: unknown[]): void {
  let keys = remembered.get(db);
  if (!keys) {
    keys = new LruMap(CAPACITY);
    remembered.set(db, keys);
  }
  keys.set(keyId, rows);
}

/** Drops a key's rows: the full check refused it, so it is no guess for anything. */
export const forgetKeyRows = (db: Db, keyId: string): void => remembered.get(db)?.delete(keyId);

/** How many parameters keyGuardSql takes. */
export const KEY_GUARD_PARAMETERS = 8;

/** The values of keyGuardSql's parameters, in order. */
export const keyGuardValues = (guard: KeyGuard): unknown[] =>
  [guard.keyId, guard.workspaceId, guard.name, guard.scopes, guard.expiresAt ?? '', guard.secretHash, guard.now, guard.role];

/**
 * A condition that holds while the key reads as guessed: not revoked, the same name, scopes and
 * expiry, no collection restriction (keys with one are never guessed), the request's secret one
 * of its live secrets, and the same role behind it (its creator's membership or its service
 * account). Its parameters are `first` to `first + 7` (keyGuardValues); keyGuardCondition below
 * must say the same.
 */
export const keyGuardSql = (parameter: (position: number) => string, first: number): string => {
  const p = (offset: number) => parameter(first + offset);
  return `exists (select 1 from api_keys k
    where k.id = ${p(0)} and k.workspace_id = ${p(1)} and k.revoked_at is null and k.name = ${p(2)} and k.scopes = ${p(3)}
    and k.collections is null and coalesce(k.expires_at, '') = ${p(4)}
    and exists (select 1 from api_key_secrets s where s.key_id = k.id and s.secret_hash = ${p(5)} and (s.expires_at is null or s.expires_at > ${p(6)}))
    and ${p(7)} = case when k.service_account_id is null
      then (select m.role from memberships m where m.workspace_id = k.workspace_id and m.person_id = k.created_by)
      else (select sa.role from service_accounts sa where sa.id = k.service_account_id and sa.workspace_id = k.workspace_id and sa.deleted_at is null) end)`;
};

/** keyGuardSql for Kysely's builder, the values bound. */
export const keyGuardCondition = (guard: KeyGuard): RawBuilder<SqlBool> => {
  const values = keyGuardValues(guard);
  // Written with numbered markers, cut at them, and each marker replaced by its value.
  const pieces = keyGuardSql((position) => `\u0000${position}\u0000`, 0).split(/\u0000(\d+)\u0000/);
  return sql.join(pieces.map((piece, index) => (index % 2 === 1 ? sql.val(values[Number(piece)]) : sql.raw(piece))), sql``) as RawBuilder<SqlBool>;
};
