import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { addMember, Client, expectError, inNewWorkspace, signedInOwner, type Reply } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * The per-tenant limits (docs/configuration.md, "Limits per tenant"), attacked as the abuser who
 * created hundreds of each in seconds would: every limit is reached by a burst of concurrent
 * creates from two people of the workspace at once (so no lock of one caller's own rows can
 * serialise them), exactly `LIMIT` pass, the rest get the documented refusal, and the
 * neighbouring workspace (or collection, or person) still has all of its own room.
 */

const LIMIT = 3;
/** Creates fired at once: more than the limit, so some must be refused. */
const BURST = LIMIT + 3;

type CollectionStep = { op: 'create' | 'trash' | 'restore' | 'purge'; name: string };

function expectLimitRefusal(reply: Reply, thing: string, setting: string): void {
  const error = expectError(reply, 409, 'CONFLICT');
  expect(error.details).toEqual({ limit: LIMIT });
  expect(error.message).toContain(`${LIMIT} ${thing}`);
  expect(error.message).toContain(setting);
}

/** Fires `BURST` creates at once; every one not created must be the limit's refusal. Answers the created ones. */
async function burst(create: (i: number) => Promise<Reply>, thing: string, setting: string): Promise<Reply[]> {
  const answers = await Promise.all(Array.from({ length: BURST }, (_, i) => create(i)));
  for (const answer of answers) if (answer.status !== 201) expectLimitRefusal(answer, thing, setting);
  return answers.filter((answer) => answer.status === 201);
}

describeEachEngine('per-tenant limits', (engine) => {
  let t: TestApp;
  /** The owner and an admin of workspace A; the owner alone in workspace B. */
  let owner: Client;
  let admin: Client & { personId: string };
  let neighbour: Client;
  /** A workspace of the admin's own, empty, for the property test of the collection limit. */
  let scratch: Client;
  /** A's two people taking turns, so a burst comes from both at once. */
  const eitherOfA = (i: number): Client => (i % 2 === 0 ? owner : admin);

  beforeAll(async () => {
    t = await startTestApp(engine, {
      workspacesPerPerson: LIMIT,
      apiKeysPerWorkspace: LIMIT,
      collectionsPerWorkspace: LIMIT,
      serviceAccountsPerWorkspace: LIMIT,
      indexesPerCollection: LIMIT,
      schemaVersionsPerCollection: LIMIT,
    });
    owner = await signedInOwner(t);
    admin = await addMember(t, owner, 'admin@example.com', 'admin');
    neighbour = await inNewWorkspace(t, owner, 'Neighbour');
    scratch = await inNewWorkspace(t, admin, 'Scratch');
    for (const client of [owner, neighbour]) expect((await client.post('/v1/collections', { name: 'base' })).status).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('API keys: active ones count; revoking one or letting one expire makes room', async () => {
    const setting = 'PLAINBASE_API_KEYS_PER_WORKSPACE';
    const key = (client: Client, name: string, expiresAt?: string) => client.post('/v1/keys', { name, scopes: ['records:read'], ...(expiresAt ? { expiresAt } : {}) });
    const created = await burst((i) => key(eitherOfA(i), `k${i}`), 'active API keys', setting);
    expect(created).toHaveLength(LIMIT);
    expect(await burst((i) => key(neighbour, `k${i}`), 'active API keys', setting)).toHaveLength(LIMIT);

    expect((await owner.post(`/v1/keys/${created[0]!.body.id}/revoke`)).status).toBe(200);
    const inAMinute = new Date(t.clock.now().getTime() + 60_000).toISOString();
    expect((await key(owner, 'brief', inAMinute)).status).toBe(201);
    expectLimitRefusal(await key(owner, 'one more'), 'active API keys', setting);
    t.clock.advance(61_000);
    expect((await key(owner, 'after the brief one expired')).status).toBe(201);
    expectLimitRefusal(await key(neighbour, 'one more'), 'active API keys', setting);
  });

  it('collections: those in the trash count; deleting one for good makes room', async () => {
    const setting = 'PLAINBASE_COLLECTIONS_PER_WORKSPACE';
    // Each workspace holds `base` already.
    expect(await burst((i) => eitherOfA(i).post('/v1/collections', { name: `c${i}` }), 'collections', setting)).toHaveLength(LIMIT - 1);
    expect(await burst((i) => neighbour.post('/v1/collections', { name: `c${i}` }), 'collections', setting)).toHaveLength(LIMIT - 1);
    const names = (await owner.get('/v1/collections')).body.data.map((collection: { name: string }) => collection.name);
    expect(names).toHaveLength(LIMIT);

    const victim = names.find((name: string) => name !== 'base');
    expect((await owner.delete(`/v1/collections/${victim}`)).status).toBe(200);
    expectLimitRefusal(await owner.post('/v1/collections', { name: 'fresh' }), 'collections', setting);
    expect((await owner.delete(`/v1/collections/${victim}?permanent=true`)).status).toBe(204);
    expect((await owner.post('/v1/collections', { name: 'fresh' })).status).toBe(201);
    expectLimitRefusal(await admin.post('/v1/collections', { name: 'fresher' }), 'collections', setting);
  });

  it('service accounts: deleting one makes room', async () => {
    const setting = 'PLAINBASE_SERVICE_ACCOUNTS_PER_WORKSPACE';
    const account = (client: Client, name: string) => client.post('/v1/service-accounts', { name, role: 'viewer' });
    const created = await burst((i) => account(eitherOfA(i), `sa ${i}`), 'service accounts', setting);
    expect(created).toHaveLength(LIMIT);
    expect(await burst((i) => account(neighbour, `sa ${i}`), 'service accounts', setting)).toHaveLength(LIMIT);

    expect((await owner.delete(`/v1/service-accounts/${created[0]!.body.id}`)).status).toBe(204);
    expect((await account(owner, 'replacement')).status).toBe(201);
    expectLimitRefusal(await account(admin, 'one more'), 'service accounts', setting);
  });

  it('indexes: per collection; dropping one makes room', async () => {
    const setting = 'PLAINBASE_INDEXES_PER_COLLECTION';
    const index = (client: Client, name: string) => client.post('/v1/collections/base/indexes', { name, fields: [`data.${name}`] });
    expect(await burst((i) => index(eitherOfA(i), `f${i}`), 'indexes', setting)).toHaveLength(LIMIT);
    expect(await burst((i) => index(neighbour, `f${i}`), 'indexes', setting)).toHaveLength(LIMIT);
    const names = (await owner.get('/v1/collections/base/indexes')).body.data.map((row: { name: string }) => row.name);
    expect(names).toHaveLength(LIMIT);

    expect((await owner.delete(`/v1/collections/base/indexes/${names[0]}`)).status).toBe(204);
    expect((await index(owner, 'replacement')).status).toBe(201);
    expectLimitRefusal(await index(admin, 'one_more'), 'indexes', setting);
  });

  it('schema versions: per collection, for its whole life', async () => {
    const setting = 'PLAINBASE_SCHEMA_VERSIONS_PER_COLLECTION';
    const version = (client: Client, i: number) => client.post('/v1/collections/base/schemas', { schema: { type: 'object', title: `v${i}` } });
    const created = await burst((i) => version(eitherOfA(i), i), 'schema versions', setting);
    expect(created.map((answer) => answer.body.version).sort()).toEqual([1, 2, 3]);
    expect(await burst((i) => version(neighbour, i), 'schema versions', setting)).toHaveLength(LIMIT);
    // Activating one is no new version, and leaves the limit where it was.
    expect((await owner.post('/v1/collections/base/schemas/2/activate')).status).toBe(200);
    expectLimitRefusal(await version(owner, 9), 'schema versions', setting);
  });

  it('workspaces: per person, counting only those they own; handing one over makes room', async () => {
    const setting = 'PLAINBASE_WORKSPACES_PER_PERSON';
    // The owner owns A and the neighbour already; the admin owns the scratch workspace, and is a member of A, which is not theirs.
    expect(await burst((i) => owner.post('/v1/workspaces', { name: `w${i}` }), 'workspaces', setting)).toHaveLength(LIMIT - 2);
    expect(await burst((i) => admin.post('/v1/workspaces', { name: `w${i}` }), 'workspaces', setting)).toHaveLength(LIMIT - 1);

    expect((await owner.post('/v1/workspace/transfer-ownership', { personId: admin.personId })).status).toBe(204);
    expect((await owner.post('/v1/workspaces', { name: 'after handing A over' })).status).toBe(201);
    expectLimitRefusal(await owner.post('/v1/workspaces', { name: 'one more' }), 'workspaces', setting);
  });

  it('collections, under any order of creates, trashing, restores and purges: refuses a create exactly when the workspace holds the limit, trash included', async () => {
    const step = fc.record({ op: fc.constantFrom('create' as const, 'trash' as const, 'restore' as const, 'purge' as const), name: fc.constantFrom('a', 'b', 'c', 'd', 'e') });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 4, maxLength: 10 }), async (steps: CollectionStep[]) => {
        /** name → in the trash; the scratch workspace starts every run empty. */
        const model = new Map<string, boolean>();
        try {
          for (const { op, name } of steps) {
            const trashed = model.get(name);
            if (op === 'create') {
              const reply = await scratch.post('/v1/collections', { name });
              if (model.size >= LIMIT) expectLimitRefusal(reply, 'collections', 'PLAINBASE_COLLECTIONS_PER_WORKSPACE');
              else if (trashed !== undefined) expect(expectError(reply, 409, 'CONFLICT').details).toEqual({ field: 'body.name' });
              else {
                expect(reply.status).toBe(201);
                model.set(name, false);
              }
            } else if (op === 'purge') {
              expect((await scratch.delete(`/v1/collections/${name}?permanent=true`)).status).toBe(trashed === undefined ? 404 : 204);
              model.delete(name);
            } else {
              const reply = op === 'trash' ? await scratch.delete(`/v1/collections/${name}`) : await scratch.post(`/v1/collections/${name}/restore`);
              const from = op === 'restore';
              expect(reply.status).toBe(trashed === undefined ? 404 : trashed === from ? 200 : 409);
              if (trashed === from) model.set(name, !from);
            }
          }
          const live = (await scratch.get('/v1/collections?limit=10')).body.data.length;
          const inTrash = (await scratch.get('/v1/collections?trashed=true&limit=10')).body.data.length;
          const modelled = [...model.values()];
          expect([live, inTrash]).toEqual([modelled.filter((isTrashed) => !isTrashed).length, modelled.filter((isTrashed) => isTrashed).length]);
        } finally {
          for (const name of model.keys()) await scratch.delete(`/v1/collections/${name}?permanent=true`);
        }
      }),
      { seed: 31, numRuns: 10 },
    );
  });
});
