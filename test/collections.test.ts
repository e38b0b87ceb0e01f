import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { addMember, signedInOwner, type Client } from './support/client.js';
import { outbox } from './support/events.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

describeEachEngine('collections', (engine) => {
  let t: TestApp;
  let owner: Client;
  beforeEach(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
  });
  afterEach(async () => { await t.close(); });

  it('creates, reads by id and by name, lists, and emits collection.created', async () => {
    const created = await owner.post('/v1/collections', { name: 'leads', settings: { description: 'Sales leads' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'leads', public: false, settings: { description: 'Sales leads' }, trashedAt: null, activeSchemaVersion: null });
    expect(created.body.id).toMatch(/^col_/);

    expect((await owner.get(`/v1/collections/${created.body.id}`)).body.name).toBe('leads');
    expect((await owner.get('/v1/collections/leads')).body.id).toBe(created.body.id);
    const list = await owner.get('/v1/collections');
    expect(list.body.data.map((c: any) => c.name)).toEqual(['leads']);

    const events = await outbox(t);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'collection.created',
      workspaceId: owner.workspaceId,
      collectionId: created.body.id,
      data: { collection: { id: created.body.id, name: 'leads', public: false, settings: { description: 'Sales leads' } } },
    });
    expect(events[0]!.id).toMatch(/^evt_/);
    expect(events[0]!.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('refuses bad and taken names', async () => {
    await owner.post('/v1/collections', { name: 'leads' });
    for (const name of ['Leads', '1leads', 'le-ads', '', 'a'.repeat(64)]) {
      const reply = await owner.post('/v1/collections', { name });
      expect(reply.status, name).toBe(400);
      expect(reply.body.error.details.field).toBe('body.name');
    }
    const taken = await owner.post('/v1/collections', { name: 'leads' });
    expect(taken.status).toBe(409);
    expect(taken.body.error.code).toBe('CONFLICT');
    expect((await owner.post('/v1/collections', { name: 'x', extra: 1 })).body.error.details.field).toBe('body.extra');
    expect((await owner.post('/v1/collections', { name: 'x', settings: { colour: 'red' } })).status).toBe(400);
  });

  it('changes name, public and settings with collection.updated', async () => {
    const { body: col } = await owner.post('/v1/collections', { name: 'leads' });
    const changed = await owner.patch('/v1/collections/leads', { name: 'prospects', public: true, settings: { description: 'd' } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ id: col.id, name: 'prospects', public: true, settings: { description: 'd' } });
    expect((await owner.get('/v1/collections/leads')).status).toBe(404);
    expect((await owner.patch('/v1/collections/prospects', {})).status).toBe(400);
    await owner.post('/v1/collections', { name: 'other' });
    expect((await owner.patch('/v1/collections/other', { name: 'prospects' })).status).toBe(409);
    const types = (await outbox(t)).map((e) => e.type);
    expect(types).toEqual(['collection.created', 'collection.updated', 'collection.created']);
  });

  it('trash: records unreachable, name stays taken, restore brings it back, permanent delete removes everything', async () => {
    const { body: col } = await owner.post('/v1/collections', { name: 'leads' });
    const { body: rec } = await owner.post('/v1/collections/leads/records', { data: { n: 1 } });

    const trashed = await owner.delete('/v1/collections/leads');
    expect(trashed.status).toBe(200);
    expect(trashed.body.trashedAt).not.toBeNull();
    expect((await owner.get('/v1/collections')).body.data).toEqual([]);
    expect((await owner.get('/v1/collections?trashed=true')).body.data.map((c: any) => c.id)).toEqual([col.id]);
    const unreachable = await owner.get(`/v1/collections/leads/records/${rec.id}`);
    expect(unreachable.status).toBe(404);
    expect(unreachable.body.error.details.trashed).toBe(true);
    expect((await owner.post('/v1/collections/leads/records', { data: {} })).status).toBe(404);
    expect((await owner.post('/v1/collections', { name: 'leads' })).status).toBe(409);
    expect((await owner.delete('/v1/collections/leads')).status).toBe(409);

    const restored = await owner.post('/v1/collections/leads/restore');
    expect(restored.status).toBe(200);
    expect(restored.body.trashedAt).toBeNull();
    expect((await owner.get(`/v1/collections/leads/records/${rec.id}`)).body.data).toEqual({ n: 1 });
    expect((await owner.post('/v1/collections/leads/restore')).status).toBe(409);

    const purged = await owner.delete('/v1/collections/leads?permanent=true');
    expect(purged.status).toBe(204);
    expect((await owner.get(`/v1/collections/${col.id}`)).status).toBe(404);
    expect(await t.deps.db.selectFrom('records').selectAll().where('collection_id', '=', col.id).execute()).toEqual([]);
    // The name is free again, and the new collection is a different one.
    const again = await owner.post('/v1/collections', { name: 'leads' });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(col.id);

    const types = (await outbox(t)).map((e) => e.type);
    expect(types).toEqual(['collection.created', 'record.created', 'collection.deleted', 'collection.restored', 'collection.created']);
  });

  it('a purge that races an import leaves none of the import\'s records behind, and other collections untouched', async () => {
    const { body: leads } = await owner.post('/v1/collections', { name: 'leads' });
    await owner.post('/v1/collections', { name: 'kept' });
    const { body: kept } = await owner.post('/v1/collections/kept/records', { data: { stays: true } });
    const body = Array.from({ length: 300 }, (_, i) => JSON.stringify({ n: i })).join('\n');

    let imported: Promise<{ status: number; body: any }>;
    let purged: Promise<{ status: number }>;
    if (engine === 'postgres') {
      // Forced interleaving: the import's transaction, its records written, waits on a lock held
      // here on the audit table (its last write); the purge then deletes what it can see and
      // waits on the collection row, which the import's records lock through their foreign key.
      // Only once both wait does the import go on and commit, before the purge deletes the row.
      const locked = deferred();
      const release = deferred();
      let holderPid = 0;
      const held = t.deps.db.transaction().execute(async (trx) => {
        await sql`lock table audit_log in exclusive mode`.execute(trx);
        holderPid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid;
        locked.resolve();
        await release.promise;
      });
      await locked.promise;
      try {
        imported = owner.call('POST', '/v1/collections/leads/import', body, { 'content-type': 'application/x-ndjson' });
        const waitingOnAudit = async () =>
          (await sql<{ pid: number }>`select pid from pg_locks where not granted and relation = to_regclass(current_schema() || '.audit_log')`.execute(t.deps.db)).rows[0]?.pid;
        await expect.poll(waitingOnAudit, { timeout: 10_000 }).toBeTypeOf('number');
        const importPid = (await waitingOnAudit())!;
        purged = owner.delete('/v1/collections/leads?permanent=true');
        // Until the purge waits too: on the import (the collection row), or, were nothing to hold it
        // there, on the audit table at its own end, having deleted the collection already.
        const waitingOnEither = async () => (await sql`select 1 from pg_stat_activity
          where pid <> ${importPid}::int and pg_blocking_pids(pid) && array[${importPid}::int, ${holderPid}::int]`.execute(t.deps.db)).rows.length;
        await expect.poll(waitingOnEither, { timeout: 10_000 }).toBeGreaterThan(0);
      } finally {
        // Released even when a wait above fails, so the test ends instead of hanging on the lock.
        release.resolve();
        await held;
      }
    } else {
      // SQLite's one connection runs the two transactions one after the other, whichever starts first.
      imported = owner.call('POST', '/v1/collections/leads/import', body, { 'content-type': 'application/x-ndjson' });
      purged = owner.delete('/v1/collections/leads?permanent=true');
    }

    expect((await purged).status).toBe(204);
    const answer = await imported;
    // On PostgreSQL the import committed first; on SQLite it may also find the collection gone.
    if (engine === 'postgres') expect(answer.body).toMatchObject({ imported: 300 });
    else expect([200, 404]).toContain(answer.status);
    expect(await countRecords(leads.id)).toBe(0);
    expect((await owner.get(`/v1/collections/kept/records/${kept.id}`)).body.data).toEqual({ stays: true });
  });

  async function countRecords(collectionId: string): Promise<number> {
    const rows = await t.deps.db.selectFrom('records').select('id').where('collection_id', '=', collectionId).execute();
    return rows.length;
  }

  it('pages through collections with a cursor', async () => {
    for (let i = 0; i < 5; i++) await owner.post('/v1/collections', { name: `c${i}` });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const reply: any = await owner.get(`/v1/collections?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(reply.status).toBe(200);
      seen.push(...reply.body.data.map((c: any) => c.name));
      cursor = reply.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(['c0', 'c1', 'c2', 'c3', 'c4']);
    expect((await owner.get('/v1/collections?limit=0')).status).toBe(400);
    expect((await owner.get('/v1/collections?cursor=%%%')).status).toBe(400);
  });

  it('follows roles: a viewer reads but cannot create; another workspace sees nothing', async () => {
    await owner.post('/v1/collections', { name: 'leads' });
    const viewer = await addMember(t, owner, 'viewer@example.com', 'viewer');
    expect((await viewer.get('/v1/collections/leads')).status).toBe(200);
    const refused = await viewer.post('/v1/collections', { name: 'mine' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('FORBIDDEN');
    expect((await viewer.delete('/v1/collections/leads')).status).toBe(403);

    const other = await owner.post('/v1/workspaces', { name: 'second' });
    const elsewhere = { ...owner, workspaceId: other.body.id } as Client;
    owner.workspaceId = other.body.id;
    expect((await owner.get('/v1/collections/leads')).status).toBe(404);
    expect((await owner.get('/v1/collections')).body.data).toEqual([]);
    void elsewhere;
  });
});

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => { resolve = done; });
  return { promise, resolve };
}
