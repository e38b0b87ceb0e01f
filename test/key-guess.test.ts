import type { FastifyRequest } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { settleKeyGuess } from '../src/http/auth.js';
import type { KeyGuess } from '../src/modules/keys/key-guess.js';
import { Client, expectError, KeyClient, sameSessionOn, signedInOwner, type Reply } from './support/client.js';
import { startCountingApp, type CountingApp } from './support/counting-app.js';
import { describeEachEngine, startTestAppBeside, type TestApp } from './support/harness.js';

/**
 * On PostgreSQL a request with a key this process has read before starts on those rows as a
 * guess, and the route's own statement checks that the key still reads so
 * (src/modules/keys/key-guess.ts). These tests change the key, or what stands behind it, through
 * a second app on the same database, as another process would, and check that the very next get,
 * list and create through the first answer as if the key had been read first. On SQLite there is
 * no guess (an exact cache instead); the answers must be the same.
 */
describeEachEngine('a key guessed from an earlier request', (engine) => {
  let a: CountingApp;
  let b: TestApp;
  let owner: Client;
  let ownerB: Client;
  let collection = '';
  let recordId = '';

  beforeAll(async () => {
    a = await startCountingApp(engine);
    b = await startTestAppBeside(a);
    owner = await signedInOwner(a);
    ownerB = sameSessionOn(b, owner);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });
  // Each test its own collection with one record, and its own keys.
  let tests = 0;
  beforeEach(async () => {
    collection = `notes_${++tests}`;
    expect((await owner.post('/v1/collections', { name: collection })).status).toBe(201);
    recordId = (await owner.post(`/v1/collections/${collection}/records`, { data: { n: 0 } })).body.id;
  });

  async function newKey(creator: Client, body: Record<string, unknown> = {}): Promise<{ id: string; client: KeyClient }> {
    const created = await creator.post('/v1/keys', { name: 'app', scopes: ['records:read', 'records:create'], ...body });
    expect(created.status).toBe(201);
    return { id: created.body.id, client: new KeyClient(a, created.body.secret) };
  }

  /** A get, a list and a create through the first app. */
  async function useRoutes(key: Client): Promise<{ get: Reply; list: Reply; create: Reply }> {
    return {
      get: await key.get(`/v1/collections/${collection}/records/${recordId}`),
      list: await key.get(`/v1/collections/${collection}/records?limit=5`),
      create: await key.post(`/v1/collections/${collection}/records`, { data: { n: 1 } }),
    };
  }

  /** Uses each route twice, so that this process has read the key and the collection before. */
  async function warm(key: Client): Promise<void> {
    for (let round = 0; round < 2; round++) {
      const { get, list, create } = await useRoutes(key);
      expect([get.status, list.status, create.status]).toEqual([200, 200, 201]);
    }
  }

  const recordCount = async () =>
    Number((await a.storage.db.selectFrom('records').innerJoin('collections', 'collections.id', 'records.collection_id')
      .select((eb) => eb.fn.countAll().as('n')).where('collections.name', '=', collection).executeTakeFirstOrThrow()).n);

  /** Every route refuses the key as `status` `code`, and the refused create wrote nothing. */
  async function expectRefused(key: Client, status: number, code: string): Promise<void> {
    const before = await recordCount();
    const { get, list, create } = await useRoutes(key);
    expectError(get, status, code);
    expectError(list, status, code);
    expectError(create, status, code);
    expect(await recordCount()).toBe(before);
  }

  it.runIf(engine === 'postgres')('a get, a list and a create with a key read before are one statement each: the key is checked inside it', async () => {
    const key = await newKey(owner);
    await warm(key.client);
    // The proof that the guess is what the tests below refuse: no statement reads the key first.
    for (const [route, request] of [
      ['get', () => key.client.get(`/v1/collections/${collection}/records/${recordId}`)],
      ['list', () => key.client.get(`/v1/collections/${collection}/records?limit=5`)],
      ['create', () => key.client.post(`/v1/collections/${collection}/records`, { data: { n: 2 } })],
    ] as const) {
      const before = a.queries.length;
      expect((await request()).status, route).toBeLessThan(300);
      expect(a.queries.length - before, route).toBe(1);
    }
  });

  it('a key revoked through another process is refused by the next get, list and create here', async () => {
    const key = await newKey(owner);
    await warm(key.client);
    expect((await ownerB.post(`/v1/keys/${key.id}/revoke`)).status).toBe(200);
    await expectRefused(key.client, 401, 'INVALID_API_KEY');
  });

  it('the old secret of a key rotated with no grace through another process is refused here; the new one works', async () => {
    const key = await newKey(owner);
    await warm(key.client);
    const rotated = await ownerB.post(`/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: 0 });
    expect(rotated.status).toBe(200);
    await expectRefused(key.client, 401, 'INVALID_API_KEY');
    await warm(new KeyClient(a, rotated.body.secret));
  });

  it("a key follows its creator's role changed through another process: demoted, it reads but no longer creates; removed, it is refused", async () => {
    const editor = await addEditor();
    const key = await newKey(editor);
    await warm(key.client);
    expect((await ownerB.patch(`/v1/members/${editor.personId}`, { role: 'viewer' })).status).toBe(200);
    const before = await recordCount();
    const { get, list, create } = await useRoutes(key.client);
    expect([get.status, list.status]).toEqual([200, 200]);
    expectError(create, 403, 'MISSING_SCOPE');
    expect(await recordCount()).toBe(before);

    expect((await ownerB.delete(`/v1/members/${editor.personId}`)).status).toBe(204);
    await expectRefused(key.client, 401, 'INVALID_API_KEY');
  });

  it("a service account's key follows the account changed through another process: demoted, then deleted", async () => {
    const account = await owner.post('/v1/service-accounts', { name: `robot ${tests}`, role: 'editor' });
    expect(account.status).toBe(201);
    const key = await newKey(owner, { serviceAccountId: account.body.id });
    await warm(key.client);
    expect((await ownerB.patch(`/v1/service-accounts/${account.body.id}`, { role: 'viewer' })).status).toBe(200);
    expectError((await useRoutes(key.client)).create, 403, 'MISSING_SCOPE');

    expect((await ownerB.delete(`/v1/service-accounts/${account.body.id}`)).status).toBe(204);
    await expectRefused(key.client, 401, 'INVALID_API_KEY');
  });

  it('a revoked key with a stale remembered collection is refused as a key (401), not answered as a missing collection', async () => {
    const key = await newKey(owner);
    await warm(key.client);
    expect((await ownerB.patch(`/v1/collections/${collection}`, { name: `${collection}_renamed` })).status).toBe(200);
    expect((await ownerB.post(`/v1/keys/${key.id}/revoke`)).status).toBe(200);
    const { get, list, create } = await useRoutes(key.client);
    for (const reply of [get, list, create]) expectError(reply, 401, 'INVALID_API_KEY');
  });

  let editors = 0;
  async function addEditor(): Promise<Client & { personId: string }> {
    const invite = await owner.post('/v1/invites', { email: `editor${++editors}@example.com`, role: 'editor' });
    const editor = new Client(a) as Client & { personId: string };
    const accepted = await editor.post(`/v1/invites/${invite.body.token}/accept`, { name: 'Ed', password: 'member password 1' });
    expect(accepted.status).toBe(200);
    editor.workspaceId = owner.workspaceId;
    editor.personId = accepted.body.person.id;
    return editor;
  }
});

describe('the last check of a guessed key (settleKeyGuess)', () => {
  const guessThat = (settled: boolean, confirm: () => Promise<void>): { request: FastifyRequest; confirmed: () => number } => {
    let confirmed = 0;
    const guess = { settled, confirm: () => (confirmed++, confirm()) } as unknown as KeyGuess;
    return { request: { auth: { guess } } as unknown as FastifyRequest, confirmed: () => confirmed };
  };
  const settle = (request: FastifyRequest) =>
    new Promise<{ error: Error | null; payload?: unknown }>((resolve) => settleKeyGuess(request, null, 'the answer', (error, payload) => resolve({ error, payload })));

  it('sends the answer of a guess a statement held, without checking again', async () => {
    const { request, confirmed } = guessThat(true, () => Promise.reject(new Error('not called')));
    expect(await settle(request)).toEqual({ error: null, payload: 'the answer' });
    expect(confirmed()).toBe(0);
  });

  it('checks a guess nothing held before sending, and sends the refusal instead when the key is refused', async () => {
    const refusal = new Error('refused');
    const refused = guessThat(false, () => Promise.reject(refusal));
    expect(await settle(refused.request)).toEqual({ error: refusal });
    expect(refused.confirmed()).toBe(1);
    const accepted = guessThat(false, () => Promise.resolve());
    expect(await settle(accepted.request)).toEqual({ error: null, payload: 'the answer' });
    expect(accepted.confirmed()).toBe(1);
  });
});
