import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ROLE_ABILITIES, ROLE_RANK, type Role, type Scope } from '../src/abilities.js';
import { createOwner } from '../src/modules/setup/first-owner.js';
import { Client, signedInOwner, type Reply } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * A property-based test of access: random sequences of role changes (promotions and demotions),
 * removals, re-invites (also right after a removal), key creations (random scopes, restricted to a collection or not),
 * rotations and revocations, each followed through a small model of who may do and see what,
 * and checked against the real service. Probes use every key (its current and its rotated-out
 * secrets) and every person's session, and compare statuses, error codes and what the answers
 * show (a record's data only with records:read, the key list a person may see, the members and
 * their roles). The model says, from docs/security.md and docs/api-keys.md:
 * - a person's key acts with its scopes ∩ its creator's role now; removed creator: refused; a
 *   removal revokes the person's keys for good, a re-invite revives none;
 * - a restricted key touches only its collection (COLLECTION_NOT_ALLOWED after the scope check);
 * - keys are seen, rotated and revoked by their creator, or by owners and admins; rotation is
 *   refused (403) on a key whose creator outranks the caller or whose scopes the caller's role
 *   lacks; revoked keys cannot be rotated (409); revoking is idempotent;
 * - only owners and admins change roles, remove and invite; nobody is invited twice.
 *
 * Each run gets a workspace of its own in one app per engine, with a fixed seed and a bounded
 * number of runs (40, some 20 s per engine on a quiet machine); PLAINBASE_TEST_ACCESS_RUNS=n runs n.
 */

const PEOPLE = 3;
const OWNER_INDEX = -1;
const RUNS = Number(process.env.PLAINBASE_TEST_ACCESS_RUNS ?? 40);
const SEED = 20261125;
const PASSWORD = 'a property test passphrase';
const KEY_SCOPES: Scope[] = ['collections:read', 'records:read', 'records:create', 'records:update', 'schemas:write'];
const ASSIGNABLE = ['admin', 'editor', 'viewer'] as const;

type Assignable = (typeof ASSIGNABLE)[number];
/** A person of the pool (0..PEOPLE-1), or the workspace's owner (-1). */
type Who = number;

type Action =
  | { kind: 'setRole'; person: number; role: Assignable }
  | { kind: 'remove'; person: number }
  | { kind: 'reinvite'; person: number; role: Assignable }
  /** Removed and invited back at once: what a re-invite brings back, and what it must not. */
  | { kind: 'bounce'; person: number; role: Assignable }
  | { kind: 'createKey'; by: Who; scopes: Scope[]; restricted: boolean }
  | { kind: 'rotate'; by: Who; key: number }
  | { kind: 'revoke'; by: Who; key: number }
  | { kind: 'probeKey'; key: number; op: 'listA' | 'listB' | 'createA' | 'patchA' | 'me' | 'oldSecret' }
  | { kind: 'probePerson'; person: number; op: 'members' | 'patchA' | 'keys' };

const person = fc.integer({ min: 0, max: PEOPLE - 1 });
const who = fc.integer({ min: OWNER_INDEX, max: PEOPLE - 1 });
const role = fc.constantFrom(...ASSIGNABLE);
const keyIndex = fc.nat({ max: 50 });
const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('setRole' as const), person, role }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), person }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('reinvite' as const), person, role }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('bounce' as const), person, role }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('createKey' as const), by: who, scopes: fc.subarray(KEY_SCOPES, { minLength: 1 }), restricted: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('rotate' as const), by: who, key: keyIndex }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('revoke' as const), by: who, key: keyIndex }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('probeKey' as const), key: keyIndex, op: fc.constantFrom('listA', 'listB', 'createA', 'patchA', 'me', 'oldSecret') }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('probePerson' as const), person, op: fc.constantFrom('members', 'patchA', 'keys') }) },
);
const scenario = fc.record({
  initial: fc.array(fc.option(role, { nil: null }), { minLength: PEOPLE, maxLength: PEOPLE }),
  actions: fc.array(action, { minLength: 1, maxLength: 16 }),
});

interface ModelKey {
  id: string;
  creator: Who;
  scopes: Scope[];
  restricted: boolean;
  revoked: boolean;
  secret: string;
  oldSecrets: string[];
}

describeEachEngine('access, as a model says, under random changes', (engine) => {
  let t: TestApp;
  let owner: Client & { personId: string };
  const people: { client: Client; personId: string; email: string }[] = [];
  let runNumber = 0;

  beforeAll(async () => {
    // The owner makes a workspace of their own per run.
    t = await startTestApp(engine, { workspacesPerPerson: RUNS + 1 });
    owner = await signedInOwner(t);
    for (let i = 0; i < PEOPLE; i++) {
      const email = `person${i}@example.com`;
      const { person: made } = await createOwner(t.deps, { email, password: PASSWORD, name: `Person ${i}` });
      const client = new Client(t);
      const signedIn = await client.signIn(email, PASSWORD);
      if (signedIn.status !== 200) throw new Error(`sign-in of ${email}: ${JSON.stringify(signedIn.body)}`);
      people.push({ client, personId: made.id, email });
    }
  }, 60_000);
  afterAll(async () => { await t?.close(); });

  it('gives every caller exactly what the model allows, and shows only what it may see', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ initial, actions }) => {
        await runScenario(initial, actions);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  }, 300_000);

  async function runScenario(initial: (Assignable | null)[], actions: Action[]): Promise<void> {
    runNumber += 1;
    const workspace = await owner.post('/v1/workspaces', { name: `Run ${runNumber}` });
    expect(workspace.status).toBe(201);
    const workspaceId = workspace.body.id as string;
    owner.workspaceId = workspaceId;
    for (const entry of people) entry.client.workspaceId = workspaceId;
    const collections = {} as Record<'A' | 'B', { id: string; recordId: string; data: Record<string, unknown> }>;
    for (const name of ['A', 'B'] as const) {
      const data = { name, run: runNumber };
      const collection = await owner.post('/v1/collections', { name: name.toLowerCase() });
      const record = await owner.post(`/v1/collections/${collection.body.id}/records`, { data });
      collections[name] = { id: collection.body.id, recordId: record.body.id, data };
    }

    // The model.
    const members: (Role | null)[] = Array.from({ length: PEOPLE }, () => null);
    const keys: ModelKey[] = [];
    const roleOf = (whom: Who): Role | null => (whom === OWNER_INDEX ? 'owner' : members[whom]!);
    const clientOf = (whom: Who): Client => (whom === OWNER_INDEX ? owner : people[whom]!.client);
    const effective = (key: ModelKey): Set<Scope> => {
      const creatorRole = roleOf(key.creator);
      return new Set(creatorRole && !key.revoked ? key.scopes.filter((scope) => ROLE_ABILITIES[creatorRole].has(scope)) : []);
    };
    const trail: string[] = [];
    const check = (condition: boolean, what: string, reply?: Reply) => {
      if (!condition) {
        throw new Error(`${what}${reply ? `: got ${reply.status} ${JSON.stringify(reply.body)}` : ''}\nsteps so far:\n  ${trail.join('\n  ')}`);
      }
    };
    const expectRefusal = (reply: Reply, status: number, code: string, what: string) =>
      check(reply.status === status && reply.body?.error?.code === code, `${what}: expected ${status} ${code}`, reply);

    async function invite(index: number, newRole: Assignable): Promise<void> {
      const made = await owner.post('/v1/invites', { email: people[index]!.email, role: newRole });
      if (members[index]) return expectRefusal(made, 409, 'CONFLICT', `inviting a member (person ${index})`);
      check(made.status === 201, `invite person ${index}`, made);
      const accepted = await new Client(t).post(`/v1/invites/${made.body.token}/accept`, { password: PASSWORD });
      check(accepted.status === 200, `person ${index} accepts`, accepted);
      members[index] = newRole;
    }

    async function remove(index: number): Promise<void> {
      const reply = await owner.delete(`/v1/members/${people[index]!.personId}`);
      if (!members[index]) return expectRefusal(reply, 404, 'NOT_FOUND', 'removing a non-member');
      check(reply.status === 204, 'removal', reply);
      members[index] = null;
      for (const key of keys) if (key.creator === index) key.revoked = true;
    }

    for (const [index, initialRole] of initial.entries()) if (initialRole) await invite(index, initialRole);

    for (const step of actions) {
      trail.push(JSON.stringify(step));
      switch (step.kind) {
        case 'setRole': {
          const reply = await owner.patch(`/v1/members/${people[step.person]!.personId}`, { role: step.role });
          if (!members[step.person]) expectRefusal(reply, 404, 'NOT_FOUND', 'changing the role of a non-member');
          else {
            check(reply.status === 200 && reply.body.role === step.role, 'role change', reply);
            members[step.person] = step.role;
          }
          break;
        }
        case 'remove':
          await remove(step.person);
          break;
        case 'reinvite':
          await invite(step.person, step.role);
          break;
        case 'bounce':
          await remove(step.person);
          await invite(step.person, step.role);
          break;
        case 'createKey': {
          const body = { name: `k${keys.length}`, scopes: step.scopes, ...(step.restricted ? { collections: [collections.A.id] } : {}) };
          const reply = await clientOf(step.by).post('/v1/keys', body);
          const creatorRole = roleOf(step.by);
          if (!creatorRole) expectRefusal(reply, 404, 'NOT_FOUND', 'a non-member creating a key');
          else if (!step.scopes.every((scope) => ROLE_ABILITIES[creatorRole].has(scope))) expectRefusal(reply, 403, 'FORBIDDEN', `a ${creatorRole} granting ${step.scopes}`);
          else {
            check(reply.status === 201, 'key creation', reply);
            keys.push({ id: reply.body.id, creator: step.by, scopes: step.scopes, restricted: step.restricted, revoked: false, secret: reply.body.secret, oldSecrets: [] });
          }
          break;
        }
        case 'rotate':
        case 'revoke': {
          const key = keys[step.key % Math.max(1, keys.length)];
          if (!key) break;
          const reply = await clientOf(step.by).post(`/v1/keys/${key.id}/${step.kind}`, step.kind === 'rotate' ? { gracePeriodSeconds: 0 } : {});
          const callerRole = roleOf(step.by);
          const what = `${step.kind} of a key of ${key.creator} by ${step.by} (${callerRole})`;
          if (!callerRole) {
            expectRefusal(reply, 404, 'NOT_FOUND', what);
            break;
          }
          const visible = key.creator === step.by || ROLE_ABILITIES[callerRole].has('keys:manage');
          if (!visible) {
            expectRefusal(reply, 404, 'NOT_FOUND', what);
            break;
          }
          if (step.kind === 'revoke') {
            check(reply.status === 200 && reply.body.state === 'revoked', what, reply);
            key.revoked = true;
            break;
          }
          const creatorRole = roleOf(key.creator);
          const outranked = creatorRole !== null && ROLE_RANK[creatorRole] > ROLE_RANK[callerRole];
          if (outranked || !key.scopes.every((scope) => ROLE_ABILITIES[callerRole].has(scope))) expectRefusal(reply, 403, 'FORBIDDEN', what);
          else if (key.revoked) expectRefusal(reply, 409, 'CONFLICT', what);
          else {
            check(reply.status === 200 && typeof reply.body.secret === 'string', what, reply);
            key.oldSecrets.push(key.secret);
            key.secret = reply.body.secret;
          }
          break;
        }
        case 'probeKey':
          await probeKey(keys[step.key % Math.max(1, keys.length)], step.op);
          break;
        case 'probePerson':
          await probePerson(step.person, step.op);
          break;
      }
    }
    // At the end, every key and every person once more.
    for (const key of keys) for (const op of ['me', 'listB', 'patchA', 'oldSecret'] as const) await probeKey(key, op);
    for (let index = 0; index < PEOPLE; index++) for (const op of ['members', 'keys'] as const) await probePerson(index, op);

    async function probeKey(key: ModelKey | undefined, op: Extract<Action, { kind: 'probeKey' }>['op']): Promise<void> {
      if (!key) return;
      const api = new Client(t);
      const headers = { authorization: `Bearer ${op === 'oldSecret' ? (key.oldSecrets.at(-1) ?? key.secret) : key.secret}` };
      const what = `key ${keys.indexOf(key)} (${key.scopes}${key.restricted ? ', only A' : ''}, creator ${key.creator} now ${roleOf(key.creator)}, ${key.revoked ? 'revoked' : 'live'}) ${op}`;
      const pathOf = (name: 'A' | 'B') => `/v1/collections/${collections[name].id}/records`;
      const request = {
        listA: () => api.get(pathOf('A'), headers),
        listB: () => api.get(pathOf('B'), headers),
        createA: () => api.post(pathOf('A'), { data: { by: 'key' } }, headers),
        patchA: () => api.patch(`${pathOf('A')}/${collections.A.recordId}`, { data: {} }, headers),
        me: () => api.get('/v1/me', headers),
        oldSecret: () => api.get('/v1/me', headers),
      }[op];
      const reply = await request();
      if (key.revoked || !roleOf(key.creator) || (op === 'oldSecret' && key.oldSecrets.length > 0)) {
        return expectRefusal(reply, 401, 'INVALID_API_KEY', what);
      }
      const scopes = effective(key);
      if (op === 'me' || op === 'oldSecret') {
        check(reply.status === 200 && JSON.stringify([...reply.body.effectiveScopes].sort()) === JSON.stringify([...scopes].sort()), `${what}: effective scopes`, reply);
        return;
      }
      const needed: Scope = op === 'createA' ? 'records:create' : op === 'patchA' ? 'records:update' : 'records:read';
      if (!scopes.has(needed)) return expectRefusal(reply, 403, 'MISSING_SCOPE', what);
      if (op === 'listB' && key.restricted) return expectRefusal(reply, 403, 'COLLECTION_NOT_ALLOWED', what);
      if (op === 'createA') return check(reply.status === 201, what, reply);
      check(reply.status === 200, what, reply);
      if (op === 'patchA') {
        // An empty merge changes nothing, and its answer shows the data only to a reader.
        check(reply.headers.etag === '"1"', `${what}: an empty merge made a new revision`, reply);
        check(('data' in reply.body) === scopes.has('records:read'), `${what}: data shown ${'data' in reply.body}`, reply);
      } else {
        const shown = reply.body.data.map((record: { data: Record<string, unknown> }) => record.data);
        check(shown.some((data: Record<string, unknown>) => data.name === (op === 'listA' ? 'A' : 'B')), `${what}: the record is listed`, reply);
      }
    }

    async function probePerson(index: number, op: Extract<Action, { kind: 'probePerson' }>['op']): Promise<void> {
      const client = people[index]!.client;
      const personRole = members[index];
      const what = `person ${index} (${personRole}) ${op}`;
      const reply = op === 'members'
        ? await client.get('/v1/members')
        : op === 'keys'
          ? await client.get('/v1/keys?limit=1000')
          : await client.patch(`/v1/collections/${collections.A.id}/records/${collections.A.recordId}`, { data: {} });
      if (!personRole) return expectRefusal(reply, 404, 'NOT_FOUND', what);
      if (op === 'members') {
        const expected = [[owner.personId, 'owner'], ...members.flatMap((memberRole, i) => (memberRole ? [[people[i]!.personId, memberRole]] : []))];
        const got = reply.body.data.map((member: { personId: string; role: string }) => [member.personId, member.role]);
        return check(JSON.stringify(got.sort()) === JSON.stringify(expected.sort()), `${what}: members`, reply);
      }
      if (op === 'keys') {
        const seesAll = ROLE_ABILITIES[personRole].has('keys:manage');
        const expected = keys.filter((key) => seesAll || key.creator === index).map((key) => `${key.id}:${key.revoked ? 'revoked' : 'active'}`).sort();
        const got = reply.body.data.map((key: { id: string; state: string }) => `${key.id}:${key.state}`).sort();
        return check(JSON.stringify(got) === JSON.stringify(expected), `${what}: the keys it may see`, reply);
      }
      if (!ROLE_ABILITIES[personRole].has('records:update')) return expectRefusal(reply, 403, 'FORBIDDEN', what);
      // Compared as JSON values: PostgreSQL keeps an object's keys in its own order.
      check(reply.status === 200 && isDeepStrictEqual(reply.body.data, collections.A.data), what, reply);
    }
  }
});
