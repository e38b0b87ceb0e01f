import { AppError } from '../../errors.js';
import { constantTimeEqual } from '../../secrets.js';
import { keyNotValid } from './keys.js';

/**
 * The rule that decides whether an API key may call, said once, as data. Two things are made
 * from it, so that they cannot drift apart:
 * - keyRefusal: the check in TypeScript, on the rows the key check read (authenticate-key.ts);
 * - ruleSql: the same conditions as SQL, which a request started on a guessed key carries in its
 *   own statement (the key guard, key-guess.ts), so the database checks the key in that round trip.
 * The guard is the rule plus "nothing changed since the guess" (the same name, scopes, expiry,
 * role); that part is said here too, once.
 */

/** The key's columns the rule reads (api_keys, `k` in SQL). */
type KeyColumn = 'id' | 'workspace_id' | 'mode' | 'name' | 'scopes' | 'collections' | 'expires_at' | 'revoked_at' | 'service_account_id';
/** A secret's columns (api_key_secrets, `s` in SQL). */
type SecretColumn = 'secret_hash' | 'expires_at';

/** What the rule compares with: the request's values, and for the guard what the guess saw. */
export interface KeyRuleParameters {
  keyId: string;
  /** The token's mode (live or test). */
  mode: string;
  /** The hash of the request's secret. */
  secretHash: string;
  /** The request's clock, ISO text like every stored time. */
  now: string;
  /** What the guess was made from (guard only). */
  workspaceId: string;
  name: string;
  scopes: string;
  expiresAt: string | null;
  role: string;
}
type Parameter = keyof KeyRuleParameters;

type Value = { key: KeyColumn } | { secret: SecretColumn } | { role: true } | { parameter: Parameter };

/** A condition of the rule. */
export type Condition =
  | { all: Condition[] }
  | { any: Condition[] }
  | { isNull: Value }
  | { notNull: Value }
  /** Equal text; `secret`: compared in constant time in TypeScript. */
  | { equal: [Value, Value]; secret?: boolean }
  /** Equal, or both null. */
  | { same: [Value, Value] }
  /** Later than (ISO times compare as text). */
  | { later: [Value, Value] }
  /** Some secret of the key meets the condition. */
  | { someSecret: Condition };

/** The rows of a key as TypeScript sees them: the key, its secrets, the role behind it now. */
export interface KeyView {
  key: Record<KeyColumn, string | null>;
  secrets: Record<SecretColumn, string | null>[];
  /** Its creator's role in the workspace, or its service account's (if not deleted); null: none. */
  role: string | null;
}

const key = (column: KeyColumn): Value => ({ key: column });
const secret = (column: SecretColumn): Value => ({ secret: column });
const parameter = (name: Parameter): Value => ({ parameter: name });
const ROLE: Value = { role: true };

/** One clause of the rule: what must hold, and what a caller is told when it does not. */
interface Clause {
  holds: Condition;
  refusal: (view: KeyView) => AppError;
}

/** The rule, in the order its refusals are given. */
export const KEY_RULE: readonly Clause[] = [
  { holds: { all: [{ equal: [key('id'), parameter('keyId')] }, { equal: [key('mode'), parameter('mode')] }, { isNull: key('revoked_at') }] }, refusal: keyNotValid },
  {
    // A live secret of the key is the request's: one of two during a rotation's grace period.
    holds: { someSecret: { all: [{ equal: [secret('secret_hash'), parameter('secretHash')], secret: true }, { any: [{ isNull: secret('expires_at') }, { later: [secret('expires_at'), parameter('now')] }] }] } },
    refusal: keyNotValid,
  },
  {
    holds: { any: [{ isNull: key('expires_at') }, { later: [key('expires_at'), parameter('now')] }] },
    refusal: (view) => new AppError('API_KEY_EXPIRED', `The API key expired at ${view.key.expires_at}.`),
  },
  {
    holds: { notNull: ROLE },
    refusal: (view) => new AppError('INVALID_API_KEY', view.key.service_account_id !== null
      ? 'The API key belongs to a service account that was deleted.'
      : 'The API key was made by someone who is no longer in the workspace.'),
  },
];

/**
 * What the key guard adds to the rule: the key reads as it did when the guess was made, so the
 * caller made from the guess is the caller the rows make now. Keys restricted to collections are
 * never guessed (their restriction needs a statement of its own).
 */
export const UNCHANGED_SINCE_GUESS: Condition = {
  all: [
    { equal: [key('workspace_id'), parameter('workspaceId')] },
    { equal: [key('name'), parameter('name')] },
    { equal: [key('scopes'), parameter('scopes')] },
    { isNull: key('collections') },
    { same: [key('expires_at'), parameter('expiresAt')] },
    { equal: [ROLE, parameter('role')] },
  ],
};

/** The whole key guard: every clause of the rule, and unchanged since the guess. */
export const KEY_GUARD: Condition = { all: [...KEY_RULE.map((clause) => clause.holds), UNCHANGED_SINCE_GUESS] };

// ---------------------------------------------------------------------------------------------
// TypeScript

type Secret = KeyView['secrets'][number];
/** A condition made into a function, once: the check runs on every request with a key. */
type Test = (view: KeyView, parameters: KeyRuleParameters, row: Secret | null) => boolean;
type Read = (view: KeyView, parameters: KeyRuleParameters, row: Secret | null) => string | null;

function reader(of: Value): Read {
  if ('key' in of) {
    const column = of.key;
    return (view) => view.key[column];
  }
  if ('secret' in of) {
    const column = of.secret;
    return (_view, _parameters, row) => {
      if (!row) throw new Error('a secret column outside someSecret');
      return row[column];
    };
  }
  if ('role' in of) return (view) => view.role;
  const name = of.parameter;
  return (_view, parameters) => parameters[name];
}

/** The condition as a TypeScript function of the key's rows and the parameters. */
function compile(condition: Condition): Test {
  if ('all' in condition) {
    const parts = condition.all.map(compile);
    return (view, parameters, row) => parts.every((part) => part(view, parameters, row));
  }
  if ('any' in condition) {
    const parts = condition.any.map(compile);
    return (view, parameters, row) => parts.some((part) => part(view, parameters, row));
  }
  if ('isNull' in condition) {
    const read = reader(condition.isNull);
    return (view, parameters, row) => read(view, parameters, row) === null;
  }
  if ('notNull' in condition) {
    const read = reader(condition.notNull);
    return (view, parameters, row) => read(view, parameters, row) !== null;
  }
  if ('equal' in condition) {
    const [first, second] = condition.equal.map(reader) as [Read, Read];
    const equal = condition.secret ? constantTimeEqual : (a: string, b: string) => a === b;
    return (view, parameters, row) => {
      const a = first(view, parameters, row);
      const b = second(view, parameters, row);
      return a !== null && b !== null && equal(a, b);
    };
  }
  if ('same' in condition) {
    const [first, second] = condition.same.map(reader) as [Read, Read];
    return (view, parameters, row) => (first(view, parameters, row) ?? '') === (second(view, parameters, row) ?? '');
  }
  if ('later' in condition) {
    const [first, second] = condition.later.map(reader) as [Read, Read];
    return (view, parameters, row) => {
      const a = first(view, parameters, row);
      const b = second(view, parameters, row);
      return a !== null && b !== null && a > b;
    };
  }
  const inner = compile(condition.someSecret);
  return (view, parameters) => {
    // Every secret is looked at, without stopping at a match, so the time taken tells nothing.
    let found = false;
    for (const each of view.secrets) found = inner(view, parameters, each) || found;
    return found;
  };
}

const COMPILED_RULE = KEY_RULE.map((clause) => ({ test: compile(clause.holds), refusal: clause.refusal }));
const compiled = new WeakMap<Condition, Test>();

/** The first refusal of the rule for the key's rows, or null when the key may call. */
export function keyRefusal(view: KeyView, parameters: KeyRuleParameters): AppError | null {
  for (const clause of COMPILED_RULE) if (!clause.test(view, parameters, null)) return clause.refusal(view);
  return null;
}

/** Whether a condition (of this rule, or made of its parts) holds for the key's rows. */
export function holds(condition: Condition, view: KeyView, parameters: KeyRuleParameters): boolean {
  let test = compiled.get(condition);
  if (!test) {
    test = compile(condition);
    compiled.set(condition, test);
  }
  return test(view, parameters, null);
}

// ---------------------------------------------------------------------------------------------
// SQL

/** The parameters of ruleSql's text, in order: their values are ruleValues. */
export const GUARD_PARAMETERS: readonly Parameter[] = ['keyId', 'mode', 'secretHash', 'now', 'workspaceId', 'name', 'scopes', 'expiresAt', 'role'];

/** The values of the guard's parameters, in GUARD_PARAMETERS' order (a null expiry as '', as `same` compares). */
export const ruleValues = (parameters: KeyRuleParameters): unknown[] =>
  GUARD_PARAMETERS.map((name) => (name === 'expiresAt' ? (parameters.expiresAt ?? '') : parameters[name]));

/** The role behind the key now, in SQL: the same as authenticate-key.ts's reading joins. */
const ROLE_SQL = `(case when k.service_account_id is null
      then (select m.role from memberships m where m.workspace_id = k.workspace_id and m.person_id = k.created_by)
      else (select sa.role from service_accounts sa where sa.id = k.service_account_id and sa.workspace_id = k.workspace_id and sa.deleted_at is null) end)`;

/**
 * A condition as SQL over the key `k` (api_keys), its secrets `s` inside someSecret; parameter n
 * of GUARD_PARAMETERS is `marker(first + n)`.
 */
export function conditionSql(condition: Condition, marker: (position: number) => string, first: number): string {
  const value = (of: Value): string => {
    if ('key' in of) return `k.${of.key}`;
    if ('secret' in of) return `s.${of.secret}`;
    if ('role' in of) return ROLE_SQL;
    return marker(first + GUARD_PARAMETERS.indexOf(of.parameter));
  };
  const sql = (part: Condition) => conditionSql(part, marker, first);
  if ('all' in condition) return `(${condition.all.map(sql).join(' and ')})`;
  if ('any' in condition) return `(${condition.any.map(sql).join(' or ')})`;
  if ('isNull' in condition) return `${value(condition.isNull)} is null`;
  if ('notNull' in condition) return `${value(condition.notNull)} is not null`;
  if ('equal' in condition) return `${value(condition.equal[0])} = ${value(condition.equal[1])}`;
  // The parameter side of `same` is bound as '' for null (ruleValues).
  if ('same' in condition) return `coalesce(${value(condition.same[0])}, '') = ${value(condition.same[1])}`;
  if ('later' in condition) return `${value(condition.later[0])} > ${value(condition.later[1])}`;
  return `exists (select 1 from api_key_secrets s where s.key_id = k.id and ${sql(condition.someSecret)})`;
}

/** A condition that holds while the key meets `condition`: parameters `first` to `first + 8`. */
export const keyConditionSql = (condition: Condition, marker: (position: number) => string, first: number): string =>
  `exists (select 1 from api_keys k where ${conditionSql(condition, marker, first)})`;
