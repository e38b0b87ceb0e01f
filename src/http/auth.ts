import type { FastifyRequest } from 'fastify';
import { isPersonOnly, roleAllows, type Ability, type Role, type Scope } from '../abilities.js';
import type { Config } from '../config.js';
import type { Deps } from '../deps.js';
import { AppError, forbidden, invalidRequest } from '../errors.js';
import type { Actor } from '../modules/audit/audit.js';
import type { Person } from '../modules/people/people.js';
import { findSession } from '../modules/sessions/sessions.js';
import { findRole } from '../modules/workspaces/workspaces.js';
import { authenticateKey, authenticateKeyNow, guessKeyCaller, type KeyCaller } from '../modules/keys/authenticate-key.js';
import type { KeyGuess } from '../modules/keys/key-guess.js';
import { keyNotValid } from '../modules/keys/keys.js';
import { findCollectionId } from '../modules/collections/collections.js';
import type { Access } from './access.js';
import { requestMeta } from './request-meta.js';
import { sessionCookieName, sessionTokenOf } from './session-cookie.js';

export const WORKSPACE_HEADER = 'x-baas-workspace';

/** Who is calling, settled before the handler runs. */
export interface AuthContext {
  person: Person | null;
  workspaceId: string | null;
  role: Role | null;
  actor: Actor;
  /** Set when an API key is calling. */
  key: KeyCaller | null;
  /**
   * Set when the key was not read yet, only guessed from this process's last reading of it
   * (modules/keys/key-guess.ts): every statement of the request must carry its guard, or run after
   * its confirm(). Only routes whose access says `checksKeyInStatement` are started on a guess.
   */
  guess?: KeyGuess;
}

const ANONYMOUS: AuthContext = { person: null, workspaceId: null, role: null, actor: { type: 'system', id: null, name: 'anonymous' }, key: null };

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext;
  }
}

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The one place that decides whether a caller may use a route (docs/design.md §4): it reads the
 * route's declared access, identifies the caller and checks the ability against the caller's
 * role as it is now in the database. It returns a promise only when it has to wait (a session, or
 * a key where the database cannot answer synchronously, authenticateKeyNow); otherwise undefined,
 * once the whole check has run synchronously. A refusal is thrown, or the rejection.
 * `access` is the route's (`request.routeOptions.config.access`, which builds an object per read).
 */
export function authenticate(deps: Deps, request: FastifyRequest, access: Access | undefined): Promise<void> | undefined {
  request.auth = ANONYMOUS;
  if (!access) return; // the not-found handler
  const authorization = request.headers.authorization;
  const origin = request.headers.origin;
  // A page of another origin: its request is never served as the session whose cookie it may carry (cors.ts).
  const crossOrigin = origin !== undefined && !isOwnOrigin(deps, request, origin);
  const submits = access.kind === 'workspace' && access.publicSubmit === true;
  // A key is no ambient credential (a browser never adds it by itself), so only cookies need the origin check.
  // A public submission from another page is anonymous whatever it carries; its gate checks the origin.
  if (authorization === undefined && submits && crossOrigin) return;
  if (authorization === undefined) checkOrigin(deps, request);
  if (access.kind === 'open') return;
  if (authorization !== undefined) return authenticateWithKey(deps, request, access, authorization);
  const token = crossOrigin ? null : sessionTokenOf(deps, request);
  // Public collections answer reads with no credential (readScope decides which collections), and
  // a record's create goes to the submission gate (public-submission.ts), which decides which take it.
  if (!token && access.kind === 'workspace' && (access.publicRead || submits)) return;
  if (!token) throw new AppError('UNAUTHENTICATED', 'Sign in, or send an API key as "Authorization: Bearer <key>".');
  return authenticateWithSession(deps, request, access, token);
}

/** Whether the request carries a credential at all: a key, or a session cookie. */
export function presentsCredential(config: Pick<Config, 'publicUrl'>, request: FastifyRequest): boolean {
  return request.headers.authorization !== undefined || Boolean(request.cookies[sessionCookieName(config)]);
}

async function authenticateWithSession(deps: Deps, request: FastifyRequest, access: Access, token: string): Promise<void> {
  const session = await findSession(deps, token, requestMeta(request));
  if (!session) throw new AppError('UNAUTHENTICATED', 'Your session has ended; sign in again.');
  checkCsrf(request);

  const actor: Actor = { type: 'person', id: session.person.id, name: session.person.name };
  if (access.kind === 'person') {
    request.auth = { person: session.person, workspaceId: null, role: null, actor, key: null };
    return;
  }

  const workspaceId = request.headers[WORKSPACE_HEADER];
  if (typeof workspaceId !== 'string' || workspaceId === '') {
    // details.field names it the way schema validation names fields (body.email, querystring.limit).
    throw invalidRequest(`Name the workspace in the ${WORKSPACE_HEADER} header.`, { field: `headers.${WORKSPACE_HEADER}`, header: WORKSPACE_HEADER });
  }
  const role = await findRole(deps.db, workspaceId, session.person.id);
  if (!role) throw new AppError('NOT_FOUND', 'No such workspace, or you are not a member of it.');
  request.auth = { person: session.person, workspaceId, role, actor, key: null };
  if (access.kind === 'workspace') requireAbility(request, access.ability);
}

/**
 * A program's request: the key must be valid now; then the kind of caller (docs/design.md §4, rule 2:
 * some things only a person may do) before any scope; then its scopes and collection restriction.
 */
function authenticateWithKey(deps: Deps, request: FastifyRequest, access: Access, authorization: string): Promise<void> | undefined {
  const token = bearerToken(authorization);
  if (!token) throw keyNotValid();
  const caller = authenticateKeyNow(deps, token, request.ip ?? null);
  if (caller !== null) return authorizeKey(deps, request, access, caller);
  if (access.kind === 'workspace' && access.checksKeyInStatement && startOnGuess(deps, request, access, token)) return;
  return authenticateKey(deps, token, request.ip ?? null).then((found) => authorizeKey(deps, request, access, found));
}

/**
 * Lets the request start on the key as this process last read it, without reading it now, if
 * that guess passes every check (modules/keys/key-guess.ts): the route's statements then check
 * that the key still reads so, in the same round trip. Answers whether it did; a guess that would
 * be refused is not used (the full check decides). A key refused by the later confirm() (it
 * changed since this process read it) is not counted by the failure limiter (auth-failures.ts):
 * that refusal forgets the key's rows, so each later request with it takes the full check here,
 * where refusals are counted; a guesser gains nothing, as a guess needs the key's secret.
 */
function startOnGuess(deps: Deps, request: FastifyRequest, access: Access, token: string): boolean {
  const guessed = guessKeyCaller(deps, token, request.ip ?? null);
  if (!guessed) return false;
  try {
    // Synchronous: a guessed key has no collection restriction to look up.
    authorizeKey(deps, request, access, guessed.caller);
  } catch {
    request.auth = ANONYMOUS;
    return false;
  }
  let settled = false;
  let confirming: Promise<void> | null = null;
  request.auth.guess = {
    guard: guessed.guard,
    get settled() {
      return settled;
    },
    held: () => {
      settled = true;
    },
    confirm: () => {
      if (settled && confirming === null) return Promise.resolve();
      confirming ??= authenticateKey(deps, token, request.ip ?? null)
        .then((found) => authorizeKey(deps, request, access, found))
        .finally(() => {
          settled = true;
        });
      return confirming;
    },
  };
  return true;
}

/**
 * The route-level onSend hook of every route that may start on a guessed key: should the route
 * have answered without a statement that held the guess and without confirming it, the key is
 * checked now, before anything is sent, and a refusal replaces the answer. Routes are written
 * not to need this (each of their statements carries the guard); it makes a route that forgot
 * one answer as if the key had been read first.
 */
export function settleKeyGuess(request: FastifyRequest, _reply: unknown, payload: unknown, done: (error: Error | null, payload?: unknown) => void): void {
  const guess = request.auth?.guess;
  if (!guess || guess.settled) return done(null, payload);
  guess.confirm().then(() => done(null, payload), (error: Error) => done(error));
}

function authorizeKey(deps: Deps, request: FastifyRequest, access: Access, caller: KeyCaller): Promise<void> | undefined {
  if (access.kind === 'person' || (access.kind === 'workspace' && needsPerson(access, request))) {
    throw new AppError('PERSON_REQUIRED', 'Only a signed-in person can do this; API keys never can.');
  }
  request.auth = { person: null, workspaceId: caller.workspaceId, role: caller.role, actor: caller.actor, key: caller };
  if (access.kind === 'workspace') requireAbility(request, access.ability);
  if (caller.collections) return checkCollectionRestriction(deps, request, caller.collections, caller.workspaceId);
}

/** Whether the route, or this request of it (its `alsoNeeds`), needs something only a person may do. */
function needsPerson(access: Access & { kind: 'workspace' }, request: FastifyRequest): boolean {
  const further = access.alsoNeeds?.(request.query);
  return isPersonOnly(access.ability) || (further != null && isPersonOnly(further));
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The token of an `Authorization: Bearer <token>` header, or null. */
function bearerToken(authorization: string): string | null {
  return BEARER.exec(authorization)?.[1] ?? null;
}

const COLLECTION_SCOPE_PREFIXES = ['records:', 'schemas:', 'files:'];

/** docs/design.md §4, rule 1: any record, schema or file scope also reads the collection's basic details. */
function keyAllows(key: KeyCaller, scope: Scope): boolean {
  if (key.effective.has(scope)) return true;
  return scope === 'collections:read' && [...key.effective].some((held) => COLLECTION_SCOPE_PREFIXES.some((prefix) => held.startsWith(prefix)));
}

/**
 * Whether the caller holds an ability, without refusing: for answers that show more to a caller
 * who may read more (a record's data only with records:read, docs/security.md).
 */
export function callerMay(request: FastifyRequest, ability: Ability): boolean {
  const { role, key } = request.auth;
  if (key) return !isPersonOnly(ability) && keyAllows(key, ability as Scope);
  return role !== null && roleAllows(role, ability);
}

/**
 * Checks one ability for the caller: the declared one, or one more for a route whose needs
 * depend on the request (DELETE with ?permanent=true needs records:purge).
 */
export function requireAbility(request: FastifyRequest, ability: Ability): void {
  const { role, key } = request.auth;
  if (key) {
    if (isPersonOnly(ability)) throw new AppError('PERSON_REQUIRED', 'Only a signed-in person can do this; API keys never can.');
    if (!keyAllows(key, ability)) {
      const suppressed = key.suppressed.find((entry) => entry.scope === ability);
      throw new AppError('MISSING_SCOPE', `This key lacks the scope ${ability}.`, { requiredScope: ability, ...(suppressed ? { reason: suppressed.reason } : {}) });
    }
    return;
  }
  if (!role || !roleAllows(role, ability)) throw forbidden(`Your role (${role ?? 'none'}) does not allow this (${ability}).`);
}

/** A key restricted to collections touches only those, and never creates one (docs/design.md §3). */
async function checkCollectionRestriction(deps: Deps, request: FastifyRequest, collections: string[], workspaceId: string): Promise<void> {
  if (request.method === 'POST' && request.routeOptions.url === '/v1/collections') {
    throw new AppError('COLLECTION_NOT_ALLOWED', 'A key restricted to collections cannot create collections.');
  }
  const ref = (request.params as { col?: string } | undefined)?.col;
  if (!ref) return;
  const collectionId = await findCollectionId(deps.db, workspaceId, ref);
  // An unknown collection is left to the route, which answers 404 as for anyone.
  if (collectionId !== null && !collections.includes(collectionId)) {
    throw new AppError('COLLECTION_NOT_ALLOWED', 'This key is restricted to other collections.', { collectionId });
  }
}

/**
 * Whether an Origin header names the service itself: PLAINBASE_PUBLIC_URL's origin, or, in
 * development without it, the origin the request was sent to (its own Host), so that both
 * http://localhost:8080 and http://127.0.0.1:8080 work. A cross-site page cannot choose the Host
 * its victim's browser sends, so this admits no other site; a page of another name pointed at
 * the service (DNS rebinding) has no session cookie of the service's own name to send.
 */
export function isOwnOrigin(deps: Deps, request: FastifyRequest, origin: string): boolean {
  if (origin === new URL(deps.config.publicUrl).origin) return true;
  return deps.config.originFromHost && origin.toLowerCase() === `${request.protocol}://${request.host}`.toLowerCase();
}

/** A browser request from another site is refused, whatever it carries. */
function checkOrigin(deps: Deps, request: FastifyRequest): void {
  const origin = request.headers.origin;
  if (!UNSAFE_METHODS.has(request.method) || origin === undefined) return;
  if (!isOwnOrigin(deps, request, origin)) {
    // Said in full, since the usual cause is not an attack but a dashboard opened at another address of the service.
    const expectedOrigin = new URL(deps.config.publicUrl).origin;
    throw new AppError(
      'FORBIDDEN',
      `This request came from another site. This service accepts changes only from its own address, ${expectedOrigin} (PLAINBASE_PUBLIC_URL): open the dashboard there, or set PLAINBASE_PUBLIC_URL to the address you use (see docs/dashboard.md, "Reaching it").`,
      { expectedOrigin },
    );
  }
}

/**
 * Cookies ride along on cross-site form posts; such posts can send neither a JSON content type
 * nor a custom header, so requiring one of them stops them (docs/security.md). A request whose
 * Origin is the service's own (checkOrigin refused any other) is a page of the service itself:
 * it passes as it is, so the dashboard's sign-out needs neither (docs/security.md).
 */
function checkCsrf(request: FastifyRequest): void {
  if (!UNSAFE_METHODS.has(request.method)) return;
  if (request.headers.origin !== undefined) return;
  const json = /^application\/([\w.+-]+\+)?json\b/i.test(request.headers['content-type'] ?? '');
  if (!json && request.headers[WORKSPACE_HEADER] === undefined) {
    throw forbidden(`A signed-in request that changes something must send JSON or the ${WORKSPACE_HEADER} header.`);
  }
}

/** The workspace context of a workspace route; the access check guarantees it is there. */
export function inWorkspace(request: FastifyRequest): { workspaceId: string; actor: Actor; person: Person | null; role: Role } {
  const { workspaceId, actor, person, role } = request.auth;
  if (!workspaceId || !role) throw new Error(`route ${request.routeOptions.url} used inWorkspace without workspace access`);
  return { workspaceId, actor, person, role };
}

/** The signed-in person of a person route. */
export function signedInPerson(request: FastifyRequest): Person {
  if (!request.auth.person) throw new Error(`route ${request.routeOptions.url} used signedInPerson without person access`);
  return request.auth.person;
}
