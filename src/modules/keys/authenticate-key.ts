import { ROLE_ABILITIES, type Role, type Scope } from '../../abilities.js';
import type { Deps } from '../../deps.js';
import { directQuery } from '../../db/direct-query.js';
import type { ApiKeysTable } from '../../db/schema.js';
import { fastPathOn } from '../../db/fast-paths.js';
import type { Actor } from '../audit/audit.js';
import { keyNotValid } from './keys.js';
import { keyRefusal, type KeyView } from './key-rule.js';
import { forgetKeyRows, rememberedKeyRows, rememberKeyRows, type KeyGuard } from './key-guess.js';
import { hashToken, parseToken, type ParsedToken } from './token.js';
import { VerifiedKeyRows } from './verified-key-rows.js';

/** Last use is written at most this often per key, so a busy key costs no write per request. */
const LAST_USED_PRECISION_MS = 60_000;

type KeyRow = ApiKeysTable & { secret_hash: string | null; secret_expires_at: string | null; member_role: string | null; account_role: string | null };

export interface KeyCaller {
  key: ApiKeysTable;
  workspaceId: string;
  role: Role;
  granted: Scope[];
  /** Granted scopes the role behind the key still allows: what the key may do on this request. */
  effective: ReadonlySet<Scope>;
  suppressed: { scope: Scope; reason: string }[];
  /** Collection ids the key is restricted to, or null. */
  collections: string[] | null;
  actor: Actor;
}

/**
 * The key, each of its secrets (two during a grace period) and the role behind it now: its
 * creator's membership, or its service account's role if not deleted. One statement through the
 * direct path (db/direct-query.ts): it runs on every request with a key, and Kysely's pipeline
 * around it cost more than the statement itself (docs/performance.md, "API keys").
 */
const findKeyWithSecretsAndRole = directQuery<KeyRow>('plainbase_find_api_key', (parameter) => `
  select k.id, k.workspace_id, k.name, k.mode, k.preview, k.scopes, k.collections, k.expires_at,
    k.service_account_id, k.created_by, k.created_at, k.revoked_at, k.last_used_at, k.last_used_ip,
    s.secret_hash, s.expires_at as secret_expires_at, m.role as member_role, sa.role as account_role
  from api_keys k
  left join api_key_secrets s on s.key_id = k.id
  left join memberships m on m.workspace_id = k.workspace_id and m.person_id = k.created_by
  left join service_accounts sa on sa.id = k.service_account_id and sa.workspace_id = k.workspace_id and sa.deleted_at is null
  where k.id = ${parameter(1)}`);

/**
 * Identifies the key behind a bearer token, on every request, against the database as it is
 * now: so revocation, rotation and role changes apply on the very next request in every process.
 * A refusal is the rejection. Where the database can answer synchronously, authenticateKeyNow
 * does the same without a promise.
 */
export async function authenticateKey(deps: Deps, token: string, ip: string | null): Promise<KeyCaller> {
  const parsed = parsedToken(token);
  const rows = await findKeyWithSecretsAndRole.run(deps.db, [parsed.keyId]);
  const hash = hashToken(token, deps.config.keyPepper);
  // Where statements are round trips, the rows a request accepts are the next request's guess.
  if (!deps.dialect.statementsRoundTrip) return callerOf(deps, hash, parsed, rows, ip);
  try {
    const caller = callerOf(deps, hash, parsed, rows, ip);
    rememberKeyRows(deps, parsed.keyId, rows);
    return caller;
  } catch (error) {
    forgetKeyRows(deps, parsed.keyId);
    throw error;
  }
}

/**
 * The caller as the key's rows last read by this process make it, with the guard its request's
 * statements must carry (key-guess.ts); null when there is nothing to guess from, or when the
 * guess would refuse (only the full check refuses). Where statements are not round trips
 * (SQLite) there is no guess: authenticateKeyNow's cache is exact. A key restricted to
 * collections is not guessed: its restriction is checked with a statement of its own anyway.
 */
export function guessKeyCaller(deps: Deps, token: string, ip: string | null): { caller: KeyCaller; guard: KeyGuard } | null {
  if (!deps.dialect.statementsRoundTrip || !fastPathOn('key-guess')) return null;
  const parsed = parsedToken(token);
  const rows = rememberedKeyRows<KeyRow>(deps, parsed.keyId);
  if (!rows) return null;
  const secretHash = hashToken(token, deps.config.keyPepper);
  let caller: KeyCaller;
  try {
    caller = callerOf(deps, secretHash, parsed, rows, ip);
  } catch {
    return null;
  }
  if (caller.collections) return null;
  const { key } = caller;
  return {
    caller,
    guard: { keyId: key.id, mode: parsed.mode, secretHash, now: deps.clock.now().toISOString(), workspaceId: key.workspace_id, name: key.name, scopes: key.scopes, expiresAt: key.expires_at, role: caller.role },
  };
}

/**
 * authenticateKey synchronously, where the Dialect reads synchronously (SQLite) and the connection
 * is free now: the caller, or null when it cannot be had now (then use authenticateKey). A refusal
 * is thrown. This path costs no promise and no turn of the microtask queue, which is most of what a
 * request with a key costs beyond the HTTP stack (docs/performance.md, "API keys").
 */
export function authenticateKeyNow(deps: Deps, token: string, ip: string | null): KeyCaller | null {
  if (!deps.dialect.readsSynchronously) return null;
  const parsed = parsedToken(token);
  const cache = VerifiedKeyRows.of<KeyRow>(deps.db);
  let rows = cache?.get(parsed.keyId) ?? null;
  if (rows === null) {
    rows = findKeyWithSecretsAndRole.readNow(deps.db, [parsed.keyId]);
    if (rows === null) return null;
    // Only a key that exists is kept: unknown ids from guessers must not fill the cache.
    if (rows.length > 0) cache?.set(parsed.keyId, rows);
  }
  return callerOf(deps, hashToken(token, deps.config.keyPepper), parsed, rows, ip);
}

/** The checksum rejects garbage before any database work. */
function parsedToken(token: string): ParsedToken {
  const parsed = parseToken(token);
  if (!parsed) throw keyNotValid();
  return parsed;
}

/** The rule's parameters that only the guard reads (key-rule.ts): unused by keyRefusal. */
const UNGUESSED = { workspaceId: '', name: '', scopes: '', expiresAt: null, role: '' };

/** The key's rows as key-rule.ts reads them: the key, its secrets, the role behind it now. */
function keyViewOf(rows: KeyRow[]): KeyView {
  const [first] = rows as [KeyRow];
  return {
    key: first,
    secrets: rows.filter((row) => row.secret_hash !== null).map((row) => ({ secret_hash: row.secret_hash, expires_at: row.secret_expires_at })),
    role: (first.service_account_id ? first.account_role : first.member_role) ?? null,
  };
}

/** The caller the key's rows make for a token whose secret hashes to `hash`; a refusal is thrown. */
function callerOf(deps: Deps, hash: string, parsed: ParsedToken, rows: KeyRow[], ip: string | null): KeyCaller {
  const now = deps.clock.now();
  const nowIso = now.toISOString();
  const first = rows[0];
  if (!first) throw keyNotValid();
  const { secret_hash: _hash, secret_expires_at: _until, member_role: _member, account_role: _account, ...key } = first;
  const view = keyViewOf(rows);
  const refusal = keyRefusal(view, { keyId: parsed.keyId, mode: parsed.mode, secretHash: hash, now: nowIso, ...UNGUESSED });
  if (refusal) throw refusal;
  const role = view.role as Role;
  const granted = JSON.parse(key.scopes) as Scope[];
  const effective = new Set(granted.filter((scope) => ROLE_ABILITIES[role].has(scope)));
  const suppressed = granted
    .filter((scope) => !effective.has(scope))
    .map((scope) => ({ scope, reason: `the ${key.service_account_id ? "service account's" : "creator's"} role (${role}) no longer allows it` }));

  if (!key.last_used_at || Date.parse(key.last_used_at) + LAST_USED_PRECISION_MS <= now.getTime()) {
    // Not awaited: a failed bookkeeping write must not fail the request.
    deps.db.updateTable('api_keys').set({ last_used_at: nowIso, last_used_ip: ip }).where('id', '=', key.id).execute().catch(() => undefined);
    // Rows kept for later requests (a cache, a guess) must not ask for the same write again.
    for (const row of rows) row.last_used_at = nowIso;
  }

  return {
    key,
    workspaceId: key.workspace_id,
    role,
    granted,
    effective,
    suppressed,
    collections: key.collections ? (JSON.parse(key.collections) as string[]) : null,
    actor: {
      type: 'key',
      id: key.id,
      name: key.name,
      via: key.service_account_id ? { type: 'service_account', id: key.service_account_id } : { type: 'person', id: key.created_by },
    },
  };
}
