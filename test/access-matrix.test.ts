import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERSON_ONLY_ABILITIES, ROLE_ABILITIES, ROLE_RANK, ROLES, SCOPES, type Ability, type Role, type Scope } from '../src/abilities.js';
import { buildApp, type DeclaredRoute } from '../src/app.js';
import { needs, type Access } from '../src/http/access.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';
import { closeSender } from '../src/delivery/guard-options.js';
import {
  buildMatrixWorld,
  CONTENT_KINDS,
  LATER_MS,
  marker,
  MATRIX_CONFIG,
  recordDataOf,
  type Caller,
  type CallerKind,
  type CollectionName,
  type ContentKind,
  type MatrixWorld,
} from './support/matrix-callers.js';

/**
 * The access matrix: every route the app declares, against every kind of caller, each answer
 * checked against the abilities table (src/abilities.ts data, docs/design.md §4; routes: docs/design.md §5):
 * its status, and what it may contain (no record data, file content or schema that the caller
 * may not read, docs/security.md).
 * The expectations are worked out here from the tables, never by asking the app's own checks.
 * A new route joins by itself; one with a path parameter this file cannot fill fails until
 * PARAMS names a fixture for it.
 */

/** Fills a path parameter for a caller; every parameter name of every route must be here. */
const PARAMS: Record<string, (world: MatrixWorld, caller: Caller) => string> = {
  col: (world, caller) => world.collections[caller.collection].id,
  rec: (world, caller) => world.collections[caller.collection].recordId,
  version: () => '1',
  // The record's first version (its creation): every matrix record has one.
  revision: () => '1',
  key: (world) => world.targets.keyId,
  sa: (world) => world.targets.serviceAccountId,
  personId: (world) => world.targets.personId,
  inviteId: (world) => world.targets.inviteId,
  token: (world) => world.targets.inviteToken,
  wh: (world) => world.targets.webhookId,
  dlv: (world) => world.targets.deliveryId,
  // A dashboard page (/webhooks/:id): the same HTML whatever the id.
  id: (world) => world.targets.webhookId,
  fil: (_world, caller) => matrixFiles[caller.collection],
  // An index that does not exist: an allowed caller gets 404, which still proves access passed.
  // (For a backup's content, the same name is not a backup's: 400 for the first owner, after access passed.)
  name: () => 'no_such_index',
  // A session of no one: an allowed caller gets 404 (its own sessions are its to end, in auth-sessions.test.ts).
  sessionId: () => `ses_${'0'.repeat(26)}`,
  '*': () => 'swagger-ui.css',
};

/**
 * A file in each collection, uploaded once the world is built; pub's is attached to pub's record,
 * so anonymous callers may download it.
 */
const matrixFiles = {} as Record<CollectionName, string>;

async function uploadMatrixFiles(t: TestApp, world: MatrixWorld): Promise<void> {
  const owner = world.callers.find((caller) => caller.name === 'owner session')!;
  for (const name of ['alpha', 'beta', 'pub'] as const) {
    const { id, recordId } = world.collections[name];
    const uploaded = await t.app.inject({ method: 'POST', url: `/v1/collections/${id}/files?name=matrix.txt`, headers: { ...owner.headers(), 'content-type': 'text/plain' }, payload: marker('file', name) });
    if (uploaded.statusCode !== 201) throw new Error(`matrix fixture: upload into ${name} answered ${uploaded.statusCode} ${uploaded.body}`);
    matrixFiles[name] = uploaded.json().id;
    if (name !== 'pub') continue;
    const attached = await t.app.inject({ method: 'POST', url: `/v1/collections/${id}/records/${recordId}/files`, headers: { ...owner.headers(), 'content-type': 'application/json' }, payload: { fileId: matrixFiles[name] } });
    if (attached.statusCode !== 200) throw new Error(`matrix fixture: attach in ${name} answered ${attached.statusCode} ${attached.body}`);
  }
}

/**
 * A query for routes that, allowed, would not answer at once: the event stream stays open, so
 * the matrix asks it to resume after an event that does not exist, and an allowed caller gets
 * 400, which still proves access passed.
 */
const ROUTE_QUERIES: Record<string, string> = {
  'GET /v1/events/stream': 'after=evt_00000000000000000000000000',
};

/**
 * Bodies that let a write succeed where the caller may make it, so its answer shows what such a
 * caller gets back; they leave the fixture as it was (a merge of nothing and a replacement by the
 * same data change nothing). Other rows send `{}`.
 */
const BODIES: Record<string, (caller: Caller) => unknown> = {
  'PATCH /v1/collections/:col/records/:rec': () => ({ data: {} }),
  'PUT /v1/collections/:col/records/:rec': (caller) => ({ data: recordDataOf(caller.collection) }),
  'POST /v1/collections/:col/records/:rec/files': (caller) => ({ fileId: matrixFiles[caller.collection] }),
  'POST /v1/keys/:key/rotate': () => ({ gracePeriodSeconds: 0 }),
  // Dry runs: the walk's allowed cells change nothing that a later row needs.
  'POST /v1/collections/:col/records/bulk-update': () => ({ filter: '*', patch: { matrix: true }, dryRun: true }),
  'POST /v1/collections/:col/records/bulk-delete': () => ({ filter: '*', dryRun: true }),
  'POST /v1/webhooks/:wh/retry-failed': () => ({ since: '2020-01-01T00:00:00.000Z', dryRun: true }),
};

/** The role behind the matrix's target key: the owner made it (test/support/matrix-callers.ts). */
const TARGET_KEY_ROLE: Role = 'owner';

/** Parameters that name a collection, so a key restricted to collections is checked against them. */
const COLLECTION_PARAMS = new Set(['col']);

/**
 * Routes whose needs depend on the request: an extra row each, with the further ability the
 * request needs after the route's declared one.
 */
const EXTRA_ROWS: { method: string; url: string; query: string; alsoNeeds: Ability }[] = [
  { method: 'DELETE', url: '/v1/collections/:col/records/:rec', query: 'permanent=true', alsoNeeds: 'records:purge' },
];

/**
 * The routes that need no ability, by kind. Declaring one of these kinds is a decision that
 * lets callers in without any ability, so a new one must be added here on purpose.
 */
const NO_ABILITY_ROUTES: Record<string, Access['kind']> = {
  'GET /healthz': 'open',
  'GET /readyz': 'open',
  'GET /metrics': 'open',
  'GET /v1/openapi.json': 'open',
  'POST /v1/auth/sign-in': 'open',
  'GET /v1/auth/setup': 'open',
  'POST /v1/auth/setup': 'open',
  'POST /v1/invites/:token/accept': 'open',
  'GET /v1/invites/:token/accept': 'open',
  'POST /v1/auth/sign-out': 'person',
  'POST /v1/auth/password': 'person',
  'GET /v1/auth/session': 'person',
  'GET /v1/auth/sessions': 'person',
  'DELETE /v1/auth/sessions/:sessionId': 'person',
  'POST /v1/auth/sign-out-everywhere': 'person',
  'GET /v1/workspaces': 'person',
  'POST /v1/workspaces': 'person',
  'GET /v1/me': 'member',
  'GET /v1/backups': 'person',
  'POST /v1/backups': 'person',
  'GET /v1/backups/:name/content': 'person',
};

/**
 * Person routes only the instance's first owner passes (docs/backups.md: a backup holds every
 * workspace). The matrix's owner session is the first person the world makes; every other
 * person, of this workspace or another, is refused.
 */
const FIRST_OWNER_ROUTES = new Set(['GET /v1/backups', 'POST /v1/backups', 'GET /v1/backups/:name/content']);
const isDocsRoute = (route: DeclaredRoute) => route.url === '/docs' || route.url.startsWith('/docs/');
/** The dashboard's static pages and files (src/http/dashboard.ts): open, it signs in through the API like anyone. */
const isDashboardRoute = (route: DeclaredRoute) => route.operation.startsWith('dashboard.');

interface Row {
  method: string;
  /** The route's URL pattern, as declared. */
  url: string;
  query: string;
  access: Access;
  alsoNeeds?: Ability;
  params: string[];
  /** Changes or ends things: runs after every other row, so the fixture stays as built for those. */
  destructive: boolean;
}

const label = (row: Row) => `${row.method} ${row.url}${row.query ? `?${row.query}` : ''}`;

function paramsOf(url: string): string[] {
  const names = [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1]!);
  return url.includes('*') ? [...names, '*'] : names;
}

function rowsOf(routes: DeclaredRoute[]): { rows: Row[]; problems: string[] } {
  const problems: string[] = [];
  const rows: Row[] = [];
  const add = (route: DeclaredRoute, query = '', alsoNeeds?: Ability) => {
    const params = paramsOf(route.url);
    for (const name of params.filter((param) => !(param in PARAMS))) {
      problems.push(`${route.method} ${route.url}: no fixture for the path parameter ${name === '*' ? '*' : `:${name}`}; add one to PARAMS in test/access-matrix.test.ts`);
    }
    if (params.some((param) => !(param in PARAMS))) return;
    const destructive = route.method === 'DELETE' || /\/(revoke|rotate|sign-out|sign-out-everywhere|transfer-ownership)$/.test(route.url);
    rows.push({ method: route.method, url: route.url, query, access: route.access, alsoNeeds, params, destructive });
  };
  for (const route of routes) add(route, ROUTE_QUERIES[`${route.method} ${route.url}`]);
  for (const extra of EXTRA_ROWS) {
    const route = routes.find((candidate) => candidate.method === extra.method && candidate.url === extra.url);
    if (!route) problems.push(`EXTRA_ROWS names ${extra.method} ${extra.url}, which the app no longer declares`);
    else add(route, extra.query, extra.alsoNeeds);
  }
  // Stable order: everything that keeps the fixture first, then what changes or ends things.
  rows.sort((a, b) => Number(a.destructive) - Number(b.destructive));
  return { rows, problems };
}

// ---------------------------------------------------------------------------------------------
// The expected answer, from the tables.

type Expected = { allowed: true } | { allowed: false; status: number; code: string; requiredScope?: Scope };

const ALLOWED: Expected = { allowed: true };
const refused = (status: number, code: string, requiredScope?: Scope): Expected => ({ allowed: false, status, code, ...(requiredScope ? { requiredScope } : {}) });
const PERSON_ONLY = new Set<string>(PERSON_ONLY_ABILITIES);
const SCOPE_NAMES = new Set<string>(SCOPES);
/** docs/design.md §4, rule 1: any record, schema or file scope also reads the collection's basic details. */
const GRANTS_COLLECTION_READ = /^(records|schemas|files):/;

function keyHolds(scopes: ReadonlySet<Scope>, ability: Ability): boolean {
  if ((scopes as ReadonlySet<string>).has(ability)) return true;
  return ability === 'collections:read' && [...scopes].some((scope) => GRANTS_COLLECTION_READ.test(scope));
}

/** What a key gets for one ability: null when it may. */
function keyRefusal(scopes: ReadonlySet<Scope>, ability: Ability): Expected | null {
  if (PERSON_ONLY.has(ability)) return refused(403, 'PERSON_REQUIRED');
  if (!keyHolds(scopes, ability)) return refused(403, 'MISSING_SCOPE', ability as Scope);
  return null;
}

function expectedAnswer(row: Row, kind: CallerKind, collection: CollectionName): Expected {
  const { access } = row;
  if (access.kind === 'open') return ALLOWED;
  const abilities: Ability[] = access.kind === 'workspace' ? [access.ability, ...(row.alsoNeeds ? [row.alsoNeeds] : [])] : [];
  switch (kind.type) {
    case 'anonymous':
      if (access.kind === 'workspace' && access.publicRead && collection === 'pub' && !row.alsoNeeds) return ALLOWED;
      return refused(401, 'UNAUTHENTICATED');
    case 'refused-key':
      return refused(401, kind.code);
    case 'stranger':
      if (FIRST_OWNER_ROUTES.has(`${row.method} ${row.url}`)) return refused(403, 'FORBIDDEN');
      return access.kind === 'person' ? ALLOWED : refused(404, 'NOT_FOUND');
    case 'session':
      if (FIRST_OWNER_ROUTES.has(`${row.method} ${row.url}`)) return kind.role === 'owner' ? ALLOWED : refused(403, 'FORBIDDEN');
      if (!abilities.every((ability) => ROLE_ABILITIES[kind.role].has(ability))) return refused(403, 'FORBIDDEN');
      // docs/security.md: a key acting with a higher role than the caller's may be revoked, not rotated
      // (those who may not manage others' keys do not see it at all: 404, which passes as allowed).
      if (row.method === 'POST' && row.url === '/v1/keys/:key/rotate' && ROLE_RANK[TARGET_KEY_ROLE] > ROLE_RANK[kind.role]) {
        return ROLE_ABILITIES[kind.role].has('keys:manage') ? refused(403, 'FORBIDDEN') : ALLOWED;
      }
      return ALLOWED;
    case 'key': {
      if (access.kind === 'person') return refused(403, 'PERSON_REQUIRED');
      // docs/design.md §4, rule 2: what only a person may do is refused before any scope is looked at.
      if (abilities.some((ability) => PERSON_ONLY.has(ability))) return refused(403, 'PERSON_REQUIRED');
      const [declared, ...further] = abilities;
      const first = declared ? keyRefusal(kind.scopes, declared) : null;
      if (first) return first;
      // docs/design.md §3: a restricted key touches only its collections, and never creates one.
      if (kind.collections) {
        const createsCollection = declared === 'collections:create';
        const elsewhere = row.params.some((param) => COLLECTION_PARAMS.has(param)) && !kind.collections.includes(collection);
        if (createsCollection || elsewhere) return refused(403, 'COLLECTION_NOT_ALLOWED');
      }
      for (const ability of further) {
        const refusal = keyRefusal(kind.scopes, ability);
        if (refusal) return refusal;
      }
      return ALLOWED;
    }
  }
}

const READ_SCOPE: Record<ContentKind, Scope> = { record: 'records:read', file: 'files:read', schema: 'schemas:read' };

/**
 * Whether a caller may see a collection's content of one kind in any answer. Anonymous callers
 * read a public collection's records and files, not its schemas (docs/design.md §5).
 */
function maySee(kind: CallerKind, content: ContentKind, collection: CollectionName): boolean {
  switch (kind.type) {
    case 'anonymous':
      return collection === 'pub' && content !== 'schema';
    case 'session':
      return ROLE_ABILITIES[kind.role].has(READ_SCOPE[content]);
    case 'key':
      return kind.scopes.has(READ_SCOPE[content]) && (kind.collections === null || kind.collections.includes(collection));
    default:
      return false;
  }
}

/** The content an answer shows that its caller may not read, one phrase each. */
function leaksIn(text: string, kind: CallerKind): string[] {
  const leaks: string[] = [];
  for (const content of CONTENT_KINDS) {
    for (const collection of ['alpha', 'beta', 'pub'] as const) {
      if (text.includes(marker(content, collection)) && !maySee(kind, content, collection)) leaks.push(`${content} content of ${collection}`);
    }
  }
  return leaks;
}

const describeExpected = (expected: Expected) =>
  expected.allowed ? 'allowed (neither 401 nor 403)' : `${expected.status} ${expected.code}${expected.requiredScope ? ` (requiredScope ${expected.requiredScope})` : ''}`;

function mismatch(expected: Expected, status: number, body: any): boolean {
  const error = body?.error;
  if (expected.allowed) return status === 401 || status === 403 || status >= 500;
  if (status !== expected.status || error?.code !== expected.code) return true;
  return expected.requiredScope !== undefined && error?.details?.requiredScope !== expected.requiredScope;
}

/** One readable failure listing every problem (a wrong cell, a missing fixture), one a line. */
function failOnAny(problems: string[], cells?: number): void {
  if (problems.length) throw new Error(`${problems.length} problem(s)${cells === undefined ? '' : ` in ${cells} cells`}:\n  ${problems.join('\n  ')}`);
}

// ---------------------------------------------------------------------------------------------

/**
 * The matrix takes its expectations from src/abilities.ts, so that table is pinned here to
 * docs/design.md §4 as written (and docs/design.md §4, rule 2 for what only a person may do).
 */
describe('the abilities table', () => {
  const O = ['owner'], OA = ['owner', 'admin'], OAE = ['owner', 'admin', 'editor'], ALL = ['owner', 'admin', 'editor', 'viewer'];
  const DESIGN_4: Record<string, string[]> = {
    'collections:read': ALL, 'records:read': ALL, 'schemas:read': ALL, 'files:read': ALL,
    'records:create': OAE, 'records:update': OAE, 'records:delete': OAE, 'files:write': OAE,
    'collections:create': OAE, 'collections:update': OAE, 'collections:delete': OAE, 'schemas:write': OAE,
    'members:read': ALL, 'keys:create-own': ALL,
    'keys:manage': OA, 'service-accounts:manage': OA, 'webhooks:manage': OA, 'indexes:manage': OA,
    'members:manage': OA, 'records:purge': OA, 'audit:read': OA,
    'workspace:transfer': O, 'workspace:delete': O,
  };

  it('gives each role what docs/design.md §4 says, and keys none of the person-only abilities', () => {
    const abilities = [...SCOPES, ...PERSON_ONLY_ABILITIES];
    expect(new Set(abilities)).toEqual(new Set(Object.keys(DESIGN_4)));
    for (const ability of abilities) {
      expect(ROLES.filter((role) => ROLE_ABILITIES[role].has(ability)), ability).toEqual(DESIGN_4[ability]);
    }
    expect(SCOPES.filter((scope) => PERSON_ONLY.has(scope))).toEqual([]);
  });
});

describeEachEngine('access matrix', (engine) => {
  let t: TestApp;
  let world: MatrixWorld;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-matrix-'));
    t = await startTestApp(engine, { ...MATRIX_CONFIG, dataDir });
    world = await buildMatrixWorld(t);
    await uploadMatrixFiles(t, world);
  }, 60_000);
  afterAll(async () => {
    if (!t) return;
    await closeSender(t.deps); // the ping's connection pool
    await t.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** One cell: the answer of one route to one caller, or a line saying how it was wrong. */
  async function check(row: Row, kind: CallerKind, caller: Caller, expected: Expected): Promise<string | null> {
    const path = row.url.replace(/:([A-Za-z0-9_]+)|\*/g, (whole, name: string | undefined) => encodeURIComponent(PARAMS[name ?? whole]!(world, caller)));
    const hasBody = ['POST', 'PUT', 'PATCH'].includes(row.method);
    const body = BODIES[`${row.method} ${row.url}`]?.(caller) ?? {};
    const response = await t.app.inject({
      method: row.method as 'GET',
      url: row.query ? `${path}?${row.query}` : path,
      headers: { ...caller.headers(), ...(hasBody ? { 'content-type': 'application/json' } : {}) },
      ...(hasBody ? { payload: JSON.stringify(body) } : {}),
    });
    // A request that ended the caller's session (sign-out): the next row needs a live one.
    if (caller.renew && response.cookies.some((cookie) => cookie.name === 'plainbase_session' && !cookie.value)) await caller.renew();
    let answer: any = null;
    try {
      answer = JSON.parse(response.body);
    } catch {
      // Not JSON (docs, metrics): only the status matters.
    }
    const leaks = leaksIn(response.body, kind);
    if (leaks.length) return `${label(row)} as ${caller.name}: answered ${response.statusCode} showing ${leaks.join(', ')}, which it may not read`;
    if (!mismatch(expected, response.statusCode, answer)) return null;
    const error = answer?.error;
    const got = `${response.statusCode}${error?.code ? ` ${error.code}` : ''}${error?.details?.requiredScope ? ` (requiredScope ${error.details.requiredScope})` : ''}`;
    return `${label(row)} as ${caller.name}: expected ${describeExpected(expected)}, got ${got}`;
  }

  /**
   * Sends every row as each caller. Cells that must be refused never reach a handler, and GETs
   * change nothing, so those go together; the others (they run handlers that write) one by one.
   */
  async function walk(rows: Row[], callers: { caller: Caller; kind: CallerKind }[]): Promise<{ mismatches: string[]; cells: number }> {
    const mismatches: string[] = [];
    let cells = 0;
    for (const row of rows) {
      // A caller that differs from another only in the collection it names adds nothing where none is named.
      const namesCollection = row.params.some((param) => COLLECTION_PARAMS.has(param));
      const planned = callers
        .filter(({ caller }) => namesCollection || caller.collection === 'alpha')
        .map(({ caller, kind }) => ({ caller, kind, expected: expectedAnswer(row, kind, caller.collection) }));
      const together = (cell: (typeof planned)[number]) => !cell.expected.allowed || row.method === 'GET';
      const results = new Map<number, string | null>();
      await Promise.all(planned.map(async (cell, index) => {
        if (together(cell)) results.set(index, await check(row, cell.kind, cell.caller, cell.expected));
      }));
      for (const [index, cell] of planned.entries()) {
        if (!together(cell)) results.set(index, await check(row, cell.kind, cell.caller, cell.expected));
      }
      cells += planned.length;
      for (let index = 0; index < planned.length; index += 1) {
        const line = results.get(index);
        if (line) mismatches.push(line);
      }
    }
    return { mismatches, cells };
  }

  /**
   * Every change to a record, made with success by every caller allowed to make it: the answer
   * shows the record's data only to a caller that may read records; any other gets the record's
   * id, revision, files and times (docs/security.md). Runs before the walk below, which trashes
   * alpha; each change gets a record of its own.
   */
  it('shows a changed record\'s data only to callers that may read records, whatever change they made', async () => {
    const owner = world.callers.find((caller) => caller.name === 'owner session')!;
    const send = (method: string, url: string, headers: Record<string, string>, body?: unknown) =>
      t.app.inject({ method: method as 'GET', url, headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
    const alpha = world.collections.alpha.id;
    const ownerDo = async (method: string, url: string, body?: unknown) => {
      const reply = await send(method, url, owner.headers(), body);
      if (reply.statusCode >= 300) throw new Error(`fixture: ${method} ${url} answered ${reply.statusCode} ${reply.body}`);
      return reply.json();
    };
    const newFile = async () => (await t.app.inject({ method: 'POST', url: `/v1/collections/${alpha}/files?name=c.txt`, headers: { ...owner.headers(), 'content-type': 'text/plain' }, payload: 'c' })).json().id as string;
    const DATA = recordDataOf('alpha');
    interface Change {
      method: string;
      url: string;
      /** Puts a fresh record in the state the change needs; returns what the path needs. */
      prepare: (recordId: string) => Promise<{ fileId?: string }>;
      body?: (fileId?: string) => unknown;
      path: (recordId: string, fileId?: string) => string;
      /** The record's data after the change, and whether the change makes a new revision. */
      after: Record<string, unknown>;
      changes: boolean;
    }
    const record = (recordId: string) => `/v1/collections/${alpha}/records/${recordId}`;
    const nothing = async () => ({});
    const changes: Change[] = [
      { method: 'PATCH', url: '/v1/collections/:col/records/:rec', prepare: nothing, body: () => ({ data: {} }), path: record, after: DATA, changes: false },
      { method: 'PATCH', url: '/v1/collections/:col/records/:rec', prepare: nothing, body: () => ({ data: { more: 1 } }), path: record, after: { ...DATA, more: 1 }, changes: true },
      { method: 'PUT', url: '/v1/collections/:col/records/:rec', prepare: nothing, body: () => ({ data: DATA }), path: record, after: DATA, changes: false },
      { method: 'PUT', url: '/v1/collections/:col/records/:rec', prepare: nothing, body: () => ({ data: { note: marker('record', 'alpha'), n: 2 } }), path: record, after: { note: marker('record', 'alpha'), n: 2 }, changes: true },
      { method: 'DELETE', url: '/v1/collections/:col/records/:rec', prepare: nothing, path: record, after: DATA, changes: true },
      {
        method: 'POST', url: '/v1/collections/:col/records/:rec/restore', after: DATA, changes: true,
        prepare: async (id) => (await ownerDo('DELETE', record(id)), {}),
        path: (id) => `${record(id)}/restore`,
      },
      {
        method: 'POST', url: '/v1/collections/:col/records/:rec/files', after: DATA, changes: true,
        prepare: async () => ({ fileId: await newFile() }),
        body: (fileId) => ({ fileId }),
        path: (id) => `${record(id)}/files`,
      },
      {
        method: 'DELETE', url: '/v1/collections/:col/records/:rec/files/:fil', after: DATA, changes: true,
        prepare: async (id) => {
          const fileId = await newFile();
          await ownerDo('POST', `${record(id)}/files`, { fileId });
          return { fileId };
        },
        path: (id, fileId) => `${record(id)}/files/${fileId}`,
      },
    ];
    const { rows } = rowsOf(t.app.declaredRoutes);
    const problems: string[] = [];
    let made = 0;
    const readers = new Set<string>();
    const nonReaders = new Set<string>();
    for (const change of changes) {
      const row = rows.find((candidate) => candidate.method === change.method && candidate.url === change.url && candidate.query === '')!;
      for (const caller of world.callers.filter((candidate) => candidate.collection === 'alpha' && candidate.kind.type !== 'anonymous')) {
        if (!expectedAnswer(row, caller.kind, 'alpha').allowed) continue;
        const { id } = await ownerDo('POST', `/v1/collections/${alpha}/records`, { data: DATA });
        const before = await send('GET', record(id), owner.headers());
        const { fileId } = await change.prepare(id);
        const prepared = await send('GET', `${record(id)}?trashed=true`, owner.headers());
        const reply = await send(change.method, change.path(id, fileId), caller.headers(), change.body?.(fileId));
        const where = `${change.method} ${change.url} ${JSON.stringify(change.body?.(fileId) ?? null)} as ${caller.name}`;
        made += 1;
        if (reply.statusCode !== 200) {
          problems.push(`${where}: answered ${reply.statusCode} ${reply.body}`);
          continue;
        }
        const body = reply.json();
        const revision = Number(String(prepared.headers.etag).replaceAll('"', '')) + (change.changes ? 1 : 0);
        if (reply.headers.etag !== `"${revision}"`) problems.push(`${where}: ETag ${reply.headers.etag}, expected "${revision}"`);
        if (!change.changes && before.headers.etag !== reply.headers.etag) problems.push(`${where}: changed nothing, yet the revision moved`);
        if (maySee(caller.kind, 'record', 'alpha')) {
          readers.add(caller.name);
          if (JSON.stringify(body.data) !== JSON.stringify(change.after)) problems.push(`${where}: data ${JSON.stringify(body.data)}, expected ${JSON.stringify(change.after)}`);
          continue;
        }
        nonReaders.add(caller.name);
        const keys = Object.keys(body).sort().join(',');
        if (keys !== 'collectionId,createdAt,files,id,revision,trashedAt,updatedAt') problems.push(`${where}: answered the fields ${keys}`);
        if (body.id !== id || body.revision !== revision) problems.push(`${where}: answered id ${body.id}, revision ${body.revision}`);
        if (reply.body.includes(marker('record', 'alpha'))) problems.push(`${where}: the answer holds the record's data`);
      }
    }
    failOnAny(problems, made);
    // Both sides were exercised: write-only keys of each kind, and readers (keys and every role).
    expect([...nonReaders].sort()).toEqual(['key with only files:write', 'key with only records:delete', 'key with only records:update', 'new secret of a key rotated with 2 h grace', 'old secret of a key rotated with 2 h grace']);
    expect(readers).toContain('editor session');
    expect(readers).toContain('key with all scopes');
  }, 120_000);

  it('answers every route, as every kind of caller, as the abilities table says', async () => {
    const { rows, problems } = rowsOf(t.app.declaredRoutes);
    const { mismatches, cells } = await walk(rows, world.callers.map((caller) => ({ caller, kind: caller.kind })));
    expect(cells).toBeGreaterThan(1000);
    failOnAny([...problems, ...mismatches], cells);
  }, 120_000);

  it('refuses expired keys and rotated-out secrets once expiry and grace have passed, and keeps the new secret', async () => {
    t.clock.advance(LATER_MS);
    const { rows, problems } = rowsOf(t.app.declaredRoutes);
    const later = world.callers.filter((caller) => caller.later).map((caller) => ({ caller, kind: caller.later! }));
    expect(later.map((entry) => entry.kind.type).sort()).toEqual(['key', 'refused-key', 'refused-key']);
    const { mismatches, cells } = await walk(rows, later);
    failOnAny([...problems, ...mismatches], cells);
  }, 60_000);

  it('has every route declare a known access, and an ability unless it is listed as needing none', () => {
    const problems: string[] = [];
    const known = new Set<string>([...SCOPES, ...PERSON_ONLY_ABILITIES]);
    for (const route of t.app.declaredRoutes) {
      const name = `${route.method} ${route.url}`;
      const { access } = route;
      if (access.kind === 'workspace') {
        if (!known.has(access.ability)) problems.push(`${name} needs the unknown ability ${access.ability}`);
        else if (!ROLE_ABILITIES.owner.has(access.ability)) problems.push(`${name} needs ${access.ability}, which no role has`);
        if (access.publicRead && (!SCOPE_NAMES.has(access.ability) || !access.ability.endsWith(':read'))) problems.push(`${name} is publicRead but needs ${access.ability}`);
      } else if (!['open', 'person', 'member'].includes(access.kind)) {
        problems.push(`${name} declares the unknown access kind ${(access as { kind: string }).kind}`);
      } else if (!((isDocsRoute(route) || isDashboardRoute(route)) && access.kind === 'open') && NO_ABILITY_ROUTES[name] !== access.kind) {
        problems.push(`${name} declares ${access.kind} access, needing no ability; if that is meant, list it in NO_ABILITY_ROUTES of test/access-matrix.test.ts`);
      }
    }
    const declared = new Set(t.app.declaredRoutes.map((route) => `${route.method} ${route.url}`));
    for (const name of Object.keys(NO_ABILITY_ROUTES)) if (!declared.has(name)) problems.push(`NO_ABILITY_ROUTES lists ${name}, which the app no longer declares`);
    failOnAny(problems);
  });

  it('refuses to start with a route that declares no access, and lists a declared one for this matrix', async () => {
    const app = await buildApp({ ...t.deps, logger: false });
    app.get('/v1/matrix-declared', { config: { operation: 'test.declared', access: needs('records:read') } }, async () => ({}));
    expect(app.declaredRoutes).toContainEqual({ method: 'GET', url: '/v1/matrix-declared', operation: 'test.declared', access: needs('records:read') });
    let failure: unknown = null;
    try {
      app.get('/v1/matrix-undeclared', async () => ({}));
      await app.ready();
    } catch (error) {
      failure = error;
    } finally {
      await app.close().catch(() => undefined);
    }
    expect(String(failure)).toMatch(/GET \/v1\/matrix-undeclared declares no access/);
  });
});
