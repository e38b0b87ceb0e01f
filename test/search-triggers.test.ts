import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { buildWaitingSearchIndexes } from '../src/modules/search/search-builds.js';
import { Client, inNewWorkspace, sameSessionOn, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, startTestAppBeside, type TestApp } from './support/harness.js';

/**
 * The search triggers run only while some collection searches (modules/collections/search-triggers.ts):
 * what the catalog says of them, and what the index holds, as search goes on, off and on again,
 * in two workspaces, at once.
 */
describeEachEngine('search triggers only while some collection searches', (engine) => {
  let t: TestApp;
  let owner: Client;
  let neighbour: Client;
  beforeEach(async () => {
    t = await startTestApp(engine);
    // The builds are the test's to run.
    t.deps.services.searchBuilds.stopped = true;
    owner = await signedInOwner(t);
    neighbour = await inNewWorkspace(t, owner, 'neighbour');
  });
  afterEach(async () => {
    await t.close();
  });

  /** What the catalog says: the triggers that write search rows as records are inserted and changed run. */
  async function triggersRun(): Promise<boolean> {
    if (engine === 'sqlite') {
      const { rows } = await sql<{ name: string }>`select name from sqlite_master where type = 'trigger' and name like 'records_search%' order by name`.execute(t.deps.db);
      const names = rows.map((row) => row.name);
      // The delete trigger always runs: a search row must never outlive its record (rowids come back).
      expect(names).toContain('records_search_delete');
      expect([['records_search_delete'], ['records_search_delete', 'records_search_insert', 'records_search_update']]).toContainEqual(names);
      return names.length === 3;
    }
    const { rows } = await sql<{ tgenabled: string }>`select tgenabled from pg_trigger where tgrelid = 'records'::regclass and tgname = 'records_search'`.execute(t.deps.db);
    expect(rows).toHaveLength(1);
    return rows[0]!.tgenabled !== 'D';
  }
  const searchRows = async () => Number((await sql<{ n: number }>`select count(*) as n from record_search`.execute(t.deps.db)).rows[0]!.n);
  const found = async (client: Client, collection: string, text: string) => {
    const reply = await client.get(`/v1/collections/${collection}/records?search=${encodeURIComponent(text)}&sort=createdAt&limit=100`);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body.data.map((record: any) => record.data.title);
  };
  const setSearch = async (client: Client, collection: string, searchFields: string[] | null) => {
    const reply = await client.patch(`/v1/collections/${collection}`, { settings: { searchFields } });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  };
  const add = async (client: Client, collection: string, title: string) => {
    const reply = await client.post(`/v1/collections/${collection}/records`, { data: { title } });
    expect(reply.status).toBe(201);
    t.clock.advance(10);
    return reply.body.id as string;
  };

  it('off with no searching collection; on, off and on again with the settings, the index right each time', async () => {
    expect(await triggersRun()).toBe(false);
    expect((await owner.post('/v1/collections', { name: 'notes' })).status).toBe(201);
    const oldId = await add(owner, 'notes', 'old apple');
    await add(owner, 'notes', 'old pear');
    // Nothing searches: records are written without search rows.
    expect(await triggersRun()).toBe(false);
    expect(await searchRows()).toBe(0);

    // On: the records that were there are indexed by the build, those written from now on by the triggers.
    await setSearch(owner, 'notes', ['data.title']);
    expect(await triggersRun()).toBe(true);
    await add(owner, 'notes', 'new apple');
    await buildWaitingSearchIndexes(t.deps);
    expect(await found(owner, 'notes', 'apple')).toEqual(['old apple', 'new apple']);
    await owner.patch(`/v1/collections/notes/records/${oldId}`, { data: { title: 'old quince' } });
    expect(await found(owner, 'notes', 'apple')).toEqual(['new apple']);
    expect(await found(owner, 'notes', 'quince')).toEqual(['old quince']);

    // Off: the build empties the collection's search rows, and writes add none.
    await setSearch(owner, 'notes', null);
    expect(await triggersRun()).toBe(false);
    await buildWaitingSearchIndexes(t.deps);
    expect(await searchRows()).toBe(0);
    await add(owner, 'notes', 'late apple');
    await owner.patch(`/v1/collections/notes/records/${oldId}`, { data: { title: 'old plum' } });
    expect(await searchRows()).toBe(0);

    // On again: what was written meanwhile is found as it is now.
    await setSearch(owner, 'notes', ['data.title']);
    expect(await triggersRun()).toBe(true);
    expect((await owner.get('/v1/collections/notes/records?search=apple')).status).toBe(409);
    await buildWaitingSearchIndexes(t.deps);
    expect(await found(owner, 'notes', 'apple')).toEqual(['new apple', 'late apple']);
    expect(await found(owner, 'notes', 'plum')).toEqual(['old plum']);
    expect(await found(owner, 'notes', 'quince')).toEqual([]);
    await add(owner, 'notes', 'newest apple');
    expect(await found(owner, 'notes', 'apple')).toEqual(['new apple', 'late apple', 'newest apple']);
    expect(await searchRows()).toBe(5);
  });

  it('runs while any collection of any workspace searches, created searching, in the trash or not; off once the last stops or is deleted for good', async () => {
    expect((await owner.post('/v1/collections', { name: 'notes', settings: { searchFields: ['data.title'] } })).status).toBe(201);
    expect(await triggersRun()).toBe(true);
    expect((await neighbour.post('/v1/collections', { name: 'notes' })).status).toBe(201);
    await setSearch(neighbour, 'notes', ['data.title']);
    await add(neighbour, 'notes', 'fig');
    // The owner's search goes off; the neighbour's still needs the triggers.
    await setSearch(owner, 'notes', []);
    expect(await triggersRun()).toBe(true);
    await add(neighbour, 'notes', 'fig tree');
    expect(await found(neighbour, 'notes', 'fig')).toEqual(['fig', 'fig tree']);
    // A collection in the trash keeps its index up to date for its restore.
    expect((await neighbour.delete('/v1/collections/notes')).status).toBe(200);
    expect(await triggersRun()).toBe(true);
    expect((await neighbour.post('/v1/collections/notes/restore')).status).toBe(200);
    expect(await found(neighbour, 'notes', 'tree')).toEqual(['fig tree']);
    // Deleted for good, its search rows go with its records, and nothing searches any more.
    expect((await neighbour.delete('/v1/collections/notes?permanent=true')).status).toBeLessThan(300);
    expect(await triggersRun()).toBe(false);
    expect(await searchRows()).toBe(0);
    // A setting other than searchFields leaves them as they are.
    expect((await owner.patch('/v1/collections/notes', { settings: { description: 'no search' } })).status).toBe(200);
    expect(await triggersRun()).toBe(false);
  });

  it('two workspaces switching search at once, in two processes, leave the triggers as the collections say', async () => {
    const other = await startTestAppBeside(t);
    other.deps.services.searchBuilds.stopped = true;
    try {
      const neighbourThere = sameSessionOn(other, neighbour);
      for (const client of [owner, neighbour]) expect((await client.post('/v1/collections', { name: 'notes' })).status).toBe(201);
      await add(owner, 'notes', 'plain');
      // Every pair of states, each pair of changes sent together, one through each process.
      const steps: [boolean, boolean][] = [
        [true, true],
        [false, false],
        [true, false],
        [false, true],
        [true, true],
        [false, true],
        [true, false],
        [false, false],
        [true, false],
        [false, false],
      ];
      for (const [ownerOn, neighbourOn] of steps) {
        const [a, b] = await Promise.all([
          owner.patch('/v1/collections/notes', { settings: { searchFields: ownerOn ? ['data.title'] : null } }),
          neighbourThere.patch('/v1/collections/notes', { settings: { searchFields: neighbourOn ? ['data.title'] : null } }),
        ]);
        expect([a.status, b.status], JSON.stringify([a.body, b.body])).toEqual([200, 200]);
        expect(await triggersRun(), JSON.stringify([ownerOn, neighbourOn])).toBe(ownerOn || neighbourOn);
      }
      // The index is right after it all: on for the owner again, its record found.
      await setSearch(owner, 'notes', ['data.title']);
      await buildWaitingSearchIndexes(t.deps);
      expect(await found(owner, 'notes', 'plain')).toEqual(['plain']);
      await add(owner, 'notes', 'plain two');
      expect(await found(owner, 'notes', 'plain')).toEqual(['plain', 'plain two']);
    } finally {
      await other.close();
    }
  });
});
