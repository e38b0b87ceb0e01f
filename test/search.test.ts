import { afterEach, beforeEach, expect, it } from 'vitest';
import { migratorFor } from '../src/db/migrate.js';
import { buildWaitingSearchIndexes, SEARCH_BATCH } from '../src/modules/search/search-builds.js';
import { Client, expectError, inNewWorkspace, KeyClient, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

describeEachEngine('full-text search (?search=)', (engine) => {
  let t: TestApp;
  let owner: Client;
  let neighbour: Client;
  const notes = [
    { title: 'Garden party', body: 'roses and tulips in the garden' },
    { title: 'Kitchen', body: 'a quick brown fox in the kitchen' },
    { title: 'Gardening tools', body: 'garden garden garden garden' },
    { title: 'Fox news', body: 'the brown fox is quick' },
  ];
  beforeEach(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
    neighbour = await inNewWorkspace(t, owner, 'neighbour');
    for (const client of [owner, neighbour]) {
      expect((await client.post('/v1/collections', { name: 'notes', public: true, settings: { searchFields: ['data.title', 'data.body'] } })).status).toBe(201);
    }
    for (const data of notes) {
      await owner.post('/v1/collections/notes/records', { data });
      t.clock.advance(1000);
    }
    // The neighbour holds the same words, and one of its own.
    for (const data of [...notes, { title: 'secret', body: 'neighbourly' }]) await neighbour.post('/v1/collections/notes/records', { data });
  });
  afterEach(async () => {
    await t.close();
  });

  const search = (client: Client, text: string, more = '') => client.get(`/v1/collections/notes/records?search=${encodeURIComponent(text)}${more}`);
  const titles = (reply: any) => {
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body.data.map((r: any) => r.data.title);
  };

  it('finds words (all must match), phrases and prefixes, best match first, in the workspace only', async () => {
    expect(titles(await search(owner, 'garden'))).toEqual(['Gardening tools', 'Garden party']);
    expect(titles(await search(owner, 'quick fox', '&sort=createdAt'))).toEqual(['Kitchen', 'Fox news']);
    expect(titles(await search(owner, '"brown fox is"'))).toEqual(['Fox news']);
    expect(titles(await search(owner, '"fox brown"'))).toEqual([]);
    expect(titles(await search(owner, 'gard*', '&sort=createdAt'))).toEqual(['Garden party', 'Gardening tools']);
    expect(titles(await search(owner, 'GARDEN Tulips'))).toEqual(['Garden party']);
    // The neighbour's own word is not found here, and its records with the same words are not listed.
    expect(titles(await search(owner, 'neighbourly'))).toEqual([]);
    expect(titles(await search(neighbour, 'neighbourly'))).toEqual(['secret']);
    const { body } = await search(owner, 'garden', '&count=true');
    expect(body.total).toBe(2);
    expect(body.data.every((r: any) => r.collectionId === body.data[0].collectionId)).toBe(true);
  });

  it('combines with a filter, and pages ranked results with a cursor', async () => {
    expect(titles(await search(owner, 'garden', `&filter=${encodeURIComponent('data.title ~ "party"')}`))).toEqual(['Garden party']);
    const all = titles(await search(owner, 'the'));
    expect(all).toHaveLength(3);
    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page: any = await search(owner, 'the', `&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...titles(page));
      cursor = page.body.nextCursor;
    }
    expect(seen).toEqual(all);
    // A ranked cursor is not a sorted list's, nor the other way round.
    const sorted = await search(owner, 'the', '&limit=1&sort=createdAt');
    expectError(await search(owner, 'the', `&limit=1&cursor=${sorted.body.nextCursor}`), 400, 'INVALID_REQUEST');
  });

  it('follows updates, the trash and deletes for good', async () => {
    const [kitchen] = (await search(owner, 'kitchen')).body.data;
    await owner.patch(`/v1/collections/notes/records/${kitchen.id}`, { data: { title: 'Pantry', body: 'jars' } });
    expect(titles(await search(owner, 'kitchen'))).toEqual([]);
    expect(titles(await search(owner, 'jars'))).toEqual(['Pantry']);
    await owner.delete(`/v1/collections/notes/records/${kitchen.id}`);
    expect(titles(await search(owner, 'jars'))).toEqual([]);
    expect(titles(await search(owner, 'jars', '&trashed=true'))).toEqual(['Pantry']);
    await owner.post(`/v1/collections/notes/records/${kitchen.id}/restore`);
    expect(titles(await search(owner, 'jars'))).toEqual(['Pantry']);
    expect((await owner.delete(`/v1/collections/notes/records/${kitchen.id}?permanent=true`)).status).toBeLessThan(300);
    expect(titles(await search(owner, 'jars', '&trashed=true'))).toEqual([]);
    expect(await searchRows()).toBe(notes.length * 2 + 1 - 1);
    // The neighbour's copy of the record is untouched.
    expect(titles(await search(neighbour, 'kitchen'))).toEqual(['Kitchen']);
  });

  it('indexes imported records, and a collection deleted for good takes its index rows along', async () => {
    const lines = ['{"title": "Imported orchard", "body": "apples"}', '{"title": "Imported meadow", "body": "ada@example.com wrote 3.14"}'].join('\n');
    const imported = await owner.call('POST', '/v1/collections/notes/import', `${lines}\n`, { 'content-type': 'application/x-ndjson' });
    expect(imported.status, JSON.stringify(imported.body)).toBeLessThan(300);
    expect(titles(await search(owner, 'orchard apples'))).toEqual(['Imported orchard']);
    // Punctuation splits words alike on both engines: an address and a number are found by their parts.
    expect(titles(await search(owner, 'ada@example.com'))).toEqual(['Imported meadow']);
    expect(titles(await search(owner, '"example com"'))).toEqual(['Imported meadow']);
    expect(titles(await search(owner, '3.14'))).toEqual(['Imported meadow']);
    const before = await searchRows();
    expect((await owner.delete('/v1/collections/notes?permanent=true')).status).toBeLessThan(300);
    expect(await searchRows()).toBe(before - notes.length - 2);
    expect(titles(await search(neighbour, 'garden', '&sort=createdAt'))).toEqual(['Garden party', 'Gardening tools']);
  });

  it('builds the index of existing records in the background, answering 409 until it is ready', async () => {
    await owner.post('/v1/collections', { name: 'plain' });
    for (let i = 0; i < SEARCH_BATCH + 3; i++) await owner.post('/v1/collections/plain/records', { data: { word: i % 2 ? 'odd' : 'even' } });
    expectError(await owner.get('/v1/collections/plain/records?search=odd'), 400, 'INVALID_REQUEST');
    expect((await owner.get('/v1/collections/plain/records?search=odd')).body.error.message).toContain('settings.searchFields');
    // The build is the test's to run: stop the app's own first.
    t.deps.services.searchBuilds.stopped = true;
    const patched = await owner.patch('/v1/collections/plain', { settings: { searchFields: ['data.word'] } });
    expect(patched.body.search).toEqual({ state: 'building', indexed: 0, total: SEARCH_BATCH + 3 });
    expectError(await owner.get('/v1/collections/plain/records?search=odd'), 409, 'CONFLICT');
    await buildWaitingSearchIndexes(t.deps);
    expect((await owner.get('/v1/collections/plain')).body.search).toEqual({ state: 'ready' });
    expect((await owner.get('/v1/collections/plain/records?search=odd&count=true&limit=1')).body.total).toBe(Math.floor((SEARCH_BATCH + 3) / 2));
    // Other paths: rebuilt from them; none: search off again.
    await owner.patch('/v1/collections/plain', { settings: { searchFields: ['data.other'] } });
    await buildWaitingSearchIndexes(t.deps);
    expect((await owner.get('/v1/collections/plain/records?search=odd&count=true&limit=1')).body.total).toBe(0);
    await owner.patch('/v1/collections/plain', { settings: { searchFields: null } });
    expect((await owner.get('/v1/collections/plain')).body.search).toBeUndefined();
    expectError(await owner.get('/v1/collections/plain/records?search=odd'), 400, 'INVALID_REQUEST');
  });

  it('refuses bad searchFields and answers hostile search text without a 500', async () => {
    for (const searchFields of [['title'], ['data.'], ['data.a b'], ['data.x', 'data.x'], Array.from({ length: 11 }, (_, i) => `data.f${i}`), ['data.__proto__.x"']]) {
      expectError(await owner.patch('/v1/collections/notes', { settings: { searchFields } }), 400, 'INVALID_REQUEST');
    }
    for (const text of ['*', '"', '""', '   ', '-', '()']) expectError(await search(owner, text), 400, 'INVALID_REQUEST');
    for (const text of ['garden NEAR(fox)', 'body:garden', '{body}: garden', 'garden OR fox', 'NOT garden', "garden' or '1'='1", 'garden") OR ("x', 'a\\"b', '^garden', 'garden:*', 'a & b | !c <-> d', 'gar*den*']) {
      const reply = await search(owner, text);
      expect(reply.status, text).toBe(200);
    }
    expect(titles(await search(owner, 'garden OR fox'))).toEqual([]);
    expect(titles(await search(owner, 'body:garden'))).toEqual([]);
    expect((await search(owner, 'x'.repeat(1001))).status).toBe(400);
    expectError(await search(owner, Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ')), 400, 'INVALID_REQUEST');
  });

  it('serves public collections and keys restricted to other collections get nothing', async () => {
    const anonymous = new Client(t);
    const workspace = owner.workspaceId!;
    const { body: collection } = await owner.get('/v1/collections/notes');
    expect(titles(await anonymous.get(`/v1/collections/${collection.id}/records?search=garden&sort=createdAt`))).toEqual(['Garden party', 'Gardening tools']);
    await owner.post('/v1/collections', { name: 'other' });
    const { body: other } = await owner.get('/v1/collections/other');
    const key = await owner.post('/v1/keys', { name: 'restricted', scopes: ['records:read'], collections: [other.id] });
    expect(key.status).toBe(201);
    const api = new KeyClient(t, key.body.secret);
    api.workspaceId = workspace;
    const refused = await api.get('/v1/collections/notes/records?search=garden');
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
  });

  it('finds words with combining marks (a decomposed é, Hindi), and an upgrade to migration 0022 indexes again what PostgreSQL had cut', async () => {
    const migrator = await migratorFor(t.deps.db);
    expect((await migrator.migrateTo('0021-delivery-log-retention')).error).toBeUndefined();
    await owner.post('/v1/collections/notes/records', { data: { title: 'E\u0301cole हिन्दी', body: 'marks' } });
    const found = async () => titles(await search(owner, 'e\u0301cole'));
    // Before 0022, PostgreSQL split the words at their marks.
    expect(await found()).toEqual(engine === 'postgres' ? [] : ['E\u0301cole हिन्दी']);
    t.deps.services.searchBuilds.stopped = true;
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    if (engine === 'postgres') {
      expect((await owner.get('/v1/collections/notes')).body.search).toEqual({ state: 'building', indexed: 0, total: notes.length + 1 });
      expectError(await search(owner, 'e\u0301cole'), 409, 'CONFLICT');
      // The neighbour's collection is indexed again too.
      expect((await neighbour.get('/v1/collections/notes')).body.search.state).toBe('building');
      await buildWaitingSearchIndexes(t.deps);
    }
    expect((await owner.get('/v1/collections/notes')).body.search).toEqual({ state: 'ready' });
    expect(await found()).toEqual(['E\u0301cole हिन्दी']);
    expect(titles(await search(owner, 'हिन्दी'))).toEqual(['E\u0301cole हिन्दी']);
    expect(titles(await search(owner, '"tulips in the"'))).toEqual(['Garden party']);
    expect(titles(await search(neighbour, 'neighbourly'))).toEqual(['secret']);
    // Written after the upgrade: whole words on both engines.
    await owner.post('/v1/collections/notes/records', { data: { title: 'Caf\u0301e', body: 'पानी' } });
    expect(titles(await search(owner, 'पानी'))).toEqual(['Caf\u0301e']);
  });

  async function searchRows(): Promise<number> {
    const table = engine === 'sqlite' ? 'record_search' : 'record_search';
    const { rows } = await (await import('kysely')).sql<{ n: number }>`select count(*) as n from ${(await import('kysely')).sql.table(table)}`.execute(t.deps.db);
    return Number(rows[0]!.n);
  }
});
