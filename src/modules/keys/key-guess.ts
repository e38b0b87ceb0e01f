import { boundCondition } from '../../db/bound-condition.js';
import type { Db } from '../../db/schema.js';
import { LruMap } from '../../lru-map.js';
import { GUARD_PARAMETERS, KEY_GUARD, keyConditionSql, ruleValues, type KeyRuleParameters } from './key-rule.js';

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

/**
 * What a guessed caller was made from, and what the guard finds unchanged: the rule's
 * parameters (key-rule.ts), the request's secret hash, mode and clock among them.
 */
export type KeyGuard = KeyRuleParameters;

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
export const KEY_GUARD_PARAMETERS = GUARD_PARAMETERS.length;

/** The values of keyGuardSql's parameters, in order. */
export const keyGuardValues = (guard: KeyGuard): unknown[] => ruleValues(guard);

/**
 * A condition that holds while the key reads as guessed: the key rule (key-rule.ts), made into
 * SQL from the same description the TypeScript check runs, and the key unchanged since the
 * guess. Its parameters are `first` to `first + KEY_GUARD_PARAMETERS - 1` (keyGuardValues).
 */
export const keyGuardSql = (parameter: (position: number) => string, first: number): string => keyConditionSql(KEY_GUARD, parameter, first);

/** keyGuardSql for Kysely's builder. */
const keyGuardBuilt = boundCondition((parameter) => keyGuardSql(parameter, 0), keyGuardValues);

/** keyGuardSql for Kysely's builder, the values bound. */
export const keyGuardCondition = keyGuardBuilt.condition;

/**
 * The values keyGuardCondition binds, in the order Kysely binds them (one may appear more than
 * once): for code that checks or replaces them by position.
 */
export const keyGuardBoundValues = keyGuardBuilt.bound;
