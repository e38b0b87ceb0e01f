import { boundCondition } from '../../db/bound-condition.js';
import type { Deps } from '../../deps.js';
import { LruMap } from '../../lru-map.js';
import { GUARD_PARAMETERS, KEY_GUARD, keyConditionSql, ruleValues, type KeyRuleParameters } from './key-rule.js';

/**
 * A key's rows as this app last read them, used as a guess so that a request need not read
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

/** Keys whose rows are kept per app; past it the least recently used goes first. */
const CAPACITY = 10_000;

declare module '../../services.js' {
  interface Services {
    /** The rows of keys this app last accepted, by key id: the next request's guess. */
    rememberedKeys: LruMap<string, unknown[]>;
  }
}

/** An empty set of remembered keys, for a new app's services. */
export const noRememberedKeys = (): LruMap<string, unknown[]> => new LruMap(CAPACITY);

/** The key's rows as last read by this app, if any. */
export const rememberedKeyRows = <Row>(deps: Pick<Deps, 'services'>, keyId: string): Row[] | undefined =>
  deps.services.rememberedKeys.get(keyId) as Row[] | undefined;

/** Keeps rows the full check just read and accepted, as the next request's guess. */
export const rememberKeyRows = (deps: Pick<Deps, 'services'>, keyId: string, rows: unknown[]): void => void deps.services.rememberedKeys.set(keyId, rows);

/** Drops a key's rows: the full check refused it, so it is no guess for anything. */
export const forgetKeyRows = (deps: Pick<Deps, 'services'>, keyId: string): void => void deps.services.rememberedKeys.delete(keyId);

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
