import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Scope } from '../src/abilities.js';
import { closeSender } from '../src/delivery/guard-options.js';
import { setSlowPaths, type FastPath } from '../src/db/fast-paths.js';
import { addMember, Client } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';
import { buildMatrixWorld, LATER_MS, MATRIX_CONFIG, type MatrixWorld } from './support/matrix-callers.js';

/**
 * The fast paths (src/db/fast-paths.ts) against the plain way: every probe is sent twice, with every
 * fast path on and then with all of them off, and the two answers must be the same (status and
 * body, new ids and times aside). Between probes, random changes make what a fast path relies on
 * stale: keys revoked and rotated, their creators demoted and removed, service accounts demoted
 * and deleted, a collection trashed and restored, the clock moved past expiries and grace periods.
 * A probe after a change is the first request to meet it, so a key guessed from an earlier
 * request (PostgreSQL) meets its guard, a remembered collection its guard, a create its one
 * statement, and a write on SQLite its group commit. The callers are the access matrix's (keys of
 * each scope, restricted, revoked, expiring, rotated, a service account's, sessions of each role,
 * a stranger, anonymous) and each run's own: a key made by an editor, one by a service account,
 * one of random scopes, one with a grace period, each changed by the run.
 *
 * A fixed seed and a bounded number of runs; PLAINBASE_TEST_FAST_PATH_RUNS=n runs n.
 */

const RUNS = Number(process.env.PLAINBASE_TEST_FAST_PATH_RUNS ?? 12);
const SEED = 20261129;
const ALL_FAST_PATHS: FastPath[] = ['key-guess', 'remembered-collection', 'one-statement-create', 'group-commit'];
const RUN_KEY_SCOPES: Scope[] = ['collections:read', 'records:read', 'records:create', 'records:update'];

type RouteName = 'list' | 'get' | 'create' | 'patch' | 'collection' | 'me' | 'records-of-beta';
const ROUTES: readonly RouteName[] = ['list', 'get', 'create', 'patch', 'collection', 'me', 'records-of-beta'];

/** One of the run's own callers. */
type RunCaller = 'editor key' | 'service account key' | 'random key' | 'grace key old' | 'grace key new';
const RUN_CALLERS: readonly RunCaller[] = ['editor key', 'service account key', 'random key', 'grace key old', 'grace key new'];

type Change =
  | 'revoke random key'
  | 'rotate random key'
  | 'rotate editor key with grace'
  | 'demote editor'
  | 'promote editor'
  | 'remove editor'
  | 'demote service account'
  | 'delete service account'
  | 'trash beta'
  | 'restore beta'
  | 'later';
const CHANGES: readonly Change[] = [
  'revoke random key', 'rotate random key', 'rotate editor key with grace', 'demote editor', 'promote editor', 'remove editor',
  'demote service account', 'delete service account', 'trash beta', 'restore beta', 'later',
];

type Step = { probe: RouteName; caller: { world: number } | { run: RunCaller } } | { change: Change };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ probe: fc.constantFrom(...ROUTES), caller: fc.record({ run: fc.constantFrom(...RUN_CALLERS) }) }) },
  { weight: 2, arbitrary: fc.record({ probe: fc.constantFrom(...ROUTES), caller: fc.record({ world: fc.nat({ max: 99 }) }) }) },
  { weight: 2, arbitrary: fc.record({ change: fc.constantFrom(...CHANGES) }) },
);
const scenario = fc.record({
  scopes: fc.subarray(RUN_KEY_SCOPES, { minLength: 1 }),
  steps: fc.array(step, { minLength: 4, maxLength: 24 }),
});

/** The answer with what differs between any two requests (new ids, times, request ids) replaced. */
function comparable(body: unknown): unknown {
  return JSON.parse(JSON.stringify(body ?? null), (name, value) => {
    if (name === 'requestId') return '<request>';
    if (name === 'createdAt' || name === 'updatedAt' || name === 'lastUsedAt') return '<time>';
    if (typeof value === 'string' && /^rec_[0-9a-z]{26}$/.test(value)) return '<record id>';
    return value;
  });
}

describeEachEngine('fast paths answer as the plain way', (engine) => {
  let t: TestApp;
  let world: MatrixWorld;
  let owner: Client;
  beforeAll(async () => {
    t = await startTestApp(engine, MATRIX_CONFIG);
    world = await buildMatrixWorld(t);
    const ownerCaller = world.callers.find((caller) => caller.name === 'owner session')!;
    owner = new Client(t);
    owner.cookie = ownerCaller.headers().cookie!.replace('plainbase_session=', '');
    owner.workspaceId = world.workspaceId;
  }, 60_000);
  afterAll(async () => {
    setSlowPaths([]);
    if (!t) return;
    await closeSender(t.deps);
    await t.close();
  });

  /** Sends one request twice, fast paths on then off; a line saying how the answers differ, or null. */
  async function compare(what: string, method: 'GET' | 'POST' | 'PATCH', url: string, headers: Record<string, string>, body?: unknown): Promise<string | null> {
    const send = async (slow: FastPath[]) => {
      setSlowPaths(slow);
      try {
        const response = await t.app.inject({
          method,
          url,
          headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
        });
        let parsed: unknown = response.body;
        try {
          parsed = JSON.parse(response.body);
        } catch {
          // Not JSON: compared as text.
        }
        return { status: response.statusCode, body: comparable(parsed) };
      } finally {
        setSlowPaths([]);
      }
    };
    const fast = await send([]);
    const plain = await send(ALL_FAST_PATHS);
    if (fast.status >= 500) return `${what}: the fast path answered ${fast.status} ${JSON.stringify(fast.body)}`;
    try {
      expect(fast).toEqual(plain);
      return null;
    } catch {
      return `${what}: fast ${fast.status} ${JSON.stringify(fast.body).slice(0, 300)} / plain ${plain.status} ${JSON.stringify(plain.body).slice(0, 300)}`;
    }
  }

  const ok = (reply: { status: number; body: any }, what: string) => {
    if (reply.status >= 300) throw new Error(`fixture: ${what} answered ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body;
  };

  it('for every probed route and caller, through random changes to keys, roles, collections and time', async () => {
    let run = 0;
    let probes = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async ({ scopes, steps }) => {
        run += 1;
        // The run's own callers, made fresh so that each run's changes meet them as they were made.
        const editor = await addMember(t, owner, `editor-${run}@example.com`, 'editor');
        const editorKey = ok(await editor.post('/v1/keys', { name: `editor ${run}`, scopes: RUN_KEY_SCOPES }), 'editor key') as { id: string; secret: string };
        const account = ok(await owner.post('/v1/service-accounts', { name: `robot ${run}`, role: 'editor' }), 'service account') as { id: string };
        const accountKey = ok(await owner.post('/v1/keys', { name: `robot ${run}`, scopes: RUN_KEY_SCOPES, serviceAccountId: account.id }), 'account key') as { id: string; secret: string };
        const randomKey = ok(await owner.post('/v1/keys', { name: `random ${run}`, scopes }), 'random key') as { id: string; secret: string };
        const graceKey = ok(await owner.post('/v1/keys', { name: `grace ${run}`, scopes: RUN_KEY_SCOPES }), 'grace key') as { id: string; secret: string };
        const graceNew = ok(await owner.post(`/v1/keys/${graceKey.id}/rotate`, { gracePeriodSeconds: 3600 }), 'rotate grace key') as { secret: string };
        const secrets: Record<RunCaller, string> = {
          'editor key': editorKey.secret,
          'service account key': accountKey.secret,
          'random key': randomKey.secret,
          'grace key old': graceKey.secret,
          'grace key new': graceNew.secret,
        };
        // Warm: each run key has been read once, so the next request may start on a guess.
        for (const secret of Object.values(secrets)) await t.app.inject({ method: 'GET', url: `/v1/collections/alpha/records/${world.collections.alpha.recordId}`, headers: { authorization: `Bearer ${secret}` } });

        const problems: string[] = [];
        for (const current of steps) {
          if ('change' in current) {
            await change(current.change, { editor, editorKey, account, randomKey });
            continue;
          }
          const caller = 'run' in current.caller ? null : world.callers[current.caller.world % world.callers.length]!;
          const headers = caller ? caller.headers() : { authorization: `Bearer ${secrets[(current.caller as { run: RunCaller }).run]}` };
          const collection = caller?.collection ?? 'alpha';
          const { id, recordId } = world.collections[collection];
          const name = `${current.probe} as ${caller?.name ?? (current.caller as { run: RunCaller }).run}`;
          const byName = run % 2 === 0 ? collection : id;
          const problem = await (() => {
            switch (current.probe) {
              case 'list': return compare(name, 'GET', `/v1/collections/${byName}/records?limit=5`, headers);
              case 'get': return compare(name, 'GET', `/v1/collections/${byName}/records/${recordId}`, headers);
              case 'create': return compare(name, 'POST', `/v1/collections/${byName}/records`, headers, { data: { n: run } });
              case 'patch': return compare(name, 'PATCH', `/v1/collections/${byName}/records/${recordId}`, headers, { data: {} });
              case 'collection': return compare(name, 'GET', `/v1/collections/${byName}`, headers);
              case 'me': return compare(name, 'GET', '/v1/me', headers);
              case 'records-of-beta': return compare(name, 'GET', `/v1/collections/beta/records?limit=5`, headers);
            }
          })();
          probes += 1;
          if (problem) problems.push(problem);
        }
        if (problems.length) throw new Error(`${problems.length} difference(s):\n  ${problems.join('\n  ')}`);
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    expect(probes).toBeGreaterThan(RUNS * 2);
  }, 600_000);

  async function change(which: Change, run: { editor: Client & { personId: string }; editorKey: { id: string }; account: { id: string }; randomKey: { id: string } }): Promise<void> {
    // Each change may meet a state it cannot apply to (a removed editor demoted): the answer then does not matter.
    switch (which) {
      case 'revoke random key': await owner.post(`/v1/keys/${run.randomKey.id}/revoke`); return;
      case 'rotate random key': await owner.post(`/v1/keys/${run.randomKey.id}/rotate`, { gracePeriodSeconds: 0 }); return;
      case 'rotate editor key with grace': await owner.post(`/v1/keys/${run.editorKey.id}/rotate`, { gracePeriodSeconds: 60 }); return;
      case 'demote editor': await owner.patch(`/v1/members/${run.editor.personId}`, { role: 'viewer' }); return;
      case 'promote editor': await owner.patch(`/v1/members/${run.editor.personId}`, { role: 'editor' }); return;
      case 'remove editor': await owner.delete(`/v1/members/${run.editor.personId}`); return;
      case 'demote service account': await owner.patch(`/v1/service-accounts/${run.account.id}`, { role: 'viewer' }); return;
      case 'delete service account': await owner.delete(`/v1/service-accounts/${run.account.id}`); return;
      case 'trash beta': await owner.delete(`/v1/collections/${world.collections.beta.id}`); return;
      case 'restore beta': await owner.post(`/v1/collections/${world.collections.beta.id}/restore`); return;
      case 'later': t.clock.advance(LATER_MS); return;
    }
  }
});
