import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Db } from '../src/db/schema.js';
import { purgeExpired } from '../src/modules/housekeeping/purge-expired.js';
import { addMember, allAuditEntries, Client, expectError, inNewWorkspace, KeyClient, OWNER, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, startTestAppBeside, type TestApp } from './support/harness.js';

/**
 * Undo what one caller did (docs/history.md): POST /v1/history/revert puts every record an actor
 * changed in a window back as it was before the actor's first change there, on both engines, with
 * a second workspace beside the first that it never touches.
 */
describeEachEngine('undo what one caller did', (engine) => {
  let t: TestApp;
  let beside: TestApp;
  let owner: Client & { personId: string };
  let second: Client;
  let bad: Client;
  let badId = '';
  let good: Client;
  /** Runs once before the next transaction the app opens (the race test's concurrent writer). */
  let beforeNextTransaction: (() => Promise<void>) | null = null;
  const notes = '/v1/collections/notes/records';
  const extra = '/v1/collections/extra/records';

  /** The app's database with a hook on transaction(): the test's writer gets in before the revert's batch. */
  const withHook = (fresh: Db): Db => {
    const db = fresh.withPlugin({ transformQuery: (args) => args.node, transformResult: async (args) => args.result });
    const transaction = db.transaction.bind(db);
    db.transaction = (() => {
      const builder = transaction();
      const hook = beforeNextTransaction;
      if (!hook) return builder;
      beforeNextTransaction = null;
      return { execute: async (work: Parameters<typeof builder.execute>[0]) => {
        await hook();
        return builder.execute(work);
      } } as unknown as typeof builder;
    }) as typeof db.transaction;
    return db;
  };

  beforeAll(async () => {
    t = await startTestApp(engine, { historyDays: 30 }, withHook);
    beside = await startTestAppBeside(t);
    owner = await signedInOwner(t);
    second = await inNewWorkspace(t, owner, 'Second');
    for (const client of [owner, second]) {
      for (const name of ['notes', 'extra']) expect((await client.post('/v1/collections', { name })).status).toBe(201);
    }
    const scopes = ['records:create', 'records:read', 'records:update', 'records:delete'];
    const made = await owner.post('/v1/keys', { name: 'Runaway script', scopes });
    badId = made.body.id;
    bad = new KeyClient(t, made.body.secret);
    good = new KeyClient(t, (await owner.post('/v1/keys', { name: 'Other script', scopes })).body.secret);
  });
  afterAll(async () => {
    await beside?.close();
    await t?.close();
  });

  const tick = () => t.clock.advance(1000);
  /** A fresh window: starts after everything done so far. */
  const windowStart = () => {
    tick();
    const since = t.clock.now().toISOString();
    tick();
    return since;
  };
  const create = async (client: Client, base: string, data: Record<string, unknown>) => {
    const reply = await client.post(base, { data });
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    return reply.body.id as string;
  };
  const patch = async (client: Client, url: string, data: Record<string, unknown>) => expect((await client.patch(url, { data })).status).toBe(200);
  const read = async (client: Client, url: string) => {
    const reply = await client.get(`${url}?trashed=true`);
    expect(reply.status).toBe(200);
    return { data: reply.body.data, trashed: reply.body.trashedAt !== null, etag: reply.headers.etag };
  };
  const revert = (body: Record<string, unknown>, client: Client = owner) => client.post('/v1/history/revert', body);
  const asBad = { type: 'key', id: '' };
  const badActor = () => ({ ...asBad, id: badId });

  /** What a workspace holds, counted: records and their revisions, versions, events, audit entries. */
  async function footprint(workspaceId: string) {
    const db = t.deps.db;
    const count = async (table: 'record_versions' | 'events' | 'audit_log') =>
      Number((await db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow()).n);
    const records = await db.selectFrom('records').select(['id', 'revision', 'data', 'trashed_at']).where('workspace_id', '=', workspaceId).orderBy('id').execute();
    return { records: records.map((row) => ({ ...row, revision: Number(row.revision), data: t.deps.dialect.readJson(row.data) })), versions: await count('record_versions'), events: await count('events'), audit: await count('audit_log') };
  }

  it('puts updates back, trashes what the actor created, brings back what it trashed; events, history and one audit entry', async () => {
    const updated = await create(owner, notes, { n: 1, keep: 'yes' });
    const trashedByBad = await create(owner, notes, { n: 10 });
    const changedThenTrashed = await create(owner, notes, { n: 20 });
    const untouched = await create(owner, notes, { n: 30 });
    const secondsRecord = await create(second, notes, { n: 40 });
    const secondBefore = await footprint(second.workspaceId!);
    const since = windowStart();
    await patch(bad, `${notes}/${updated}`, { n: 2 });
    tick();
    await patch(bad, `${notes}/${updated}`, { n: 3, keep: null });
    const createdByBad = await create(bad, notes, { made: 'by the script' });
    expect((await bad.delete(`${notes}/${trashedByBad}`)).status).toBe(200);
    await patch(bad, `${notes}/${changedThenTrashed}`, { n: 21 });
    expect((await bad.delete(`${notes}/${changedThenTrashed}`)).status).toBe(200);
    tick();
    const eventsFrom = t.clock.now().toISOString();

    const reply = await revert({ actor: badActor(), since });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body).toEqual({ reverted: 1, trashed: 1, restored: 2, conflicts: [], dryRun: false });

    expect(await read(owner, `${notes}/${updated}`)).toEqual({ data: { n: 1, keep: 'yes' }, trashed: false, etag: '"4"' });
    expect(await read(owner, `${notes}/${createdByBad}`)).toMatchObject({ data: { made: 'by the script' }, trashed: true, etag: '"2"' });
    expect(await read(owner, `${notes}/${trashedByBad}`)).toMatchObject({ data: { n: 10 }, trashed: false, etag: '"3"' });
    expect(await read(owner, `${notes}/${changedThenTrashed}`)).toMatchObject({ data: { n: 20 }, trashed: false, etag: '"4"' });
    expect(await read(owner, `${notes}/${untouched}`)).toMatchObject({ data: { n: 30 }, etag: '"1"' });

    // Each change has its version, made by the person who reverted, under the revert's request.
    const requestId = reply.headers['x-request-id'];
    const newest = async (id: string) => (await owner.get(`${notes}/${id}/versions?limit=1`)).body.data[0];
    const byOwner = { type: 'person', id: owner.personId, name: 'Olive Owner' };
    expect(await newest(updated)).toMatchObject({ revision: 4, change: 'reverted', data: { n: 1, keep: 'yes' }, changedBy: byOwner, requestId });
    expect(await newest(createdByBad)).toMatchObject({ revision: 2, change: 'trashed', changedBy: byOwner, requestId });
    expect(await newest(trashedByBad)).toMatchObject({ revision: 3, change: 'restored', data: { n: 10 }, requestId });
    expect(await newest(changedThenTrashed)).toMatchObject({ revision: 4, change: 'restored', data: { n: 20 }, requestId });

    // Each change has its event, as a normal write of that kind writes it.
    const events = await t.deps.db.selectFrom('events').select(['type', 'data', 'collection_id']).where('workspace_id', '=', owner.workspaceId!).where('created_at', '>=', eventsFrom).orderBy('id').execute();
    const seen = events.map((event) => {
      const data = typeof event.data === 'string' ? JSON.parse(event.data) : event.data;
      return [event.type, data.record.id, data.record.data];
    });
    expect(seen.sort((a, b) => String(a[1]).localeCompare(String(b[1])))).toEqual([
      ['record.updated', updated, { n: 1, keep: 'yes' }],
      ['record.restored', trashedByBad, { n: 10 }],
      ['record.restored', changedThenTrashed, { n: 20 }],
      ['record.deleted', createdByBad, { made: 'by the script' }],
    ].sort((a, b) => String(a[1]).localeCompare(String(b[1]))));

    const entries = await allAuditEntries(owner, 'action=history.reverted');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actor: { type: 'person', id: owner.personId }, requestId, details: { actor: badActor(), since, reverted: 1, trashed: 1, restored: 2, conflicts: 0 } });

    // Run again: everything is as it was, so nothing more happens.
    expect((await revert({ actor: badActor(), since })).body).toMatchObject({ reverted: 0, trashed: 0, restored: 0, conflicts: [] });
    expect(await footprint(second.workspaceId!)).toEqual(secondBefore);
    expect(await read(second, `${notes}/${secondsRecord}`)).toMatchObject({ data: { n: 40 }, etag: '"1"' });
  });

  it('leaves a record someone else changed afterwards, listing it as a conflict', async () => {
    const shared = await create(owner, notes, { n: 1 });
    const alone = await create(owner, notes, { n: 1 });
    const since = windowStart();
    await patch(bad, `${notes}/${shared}`, { n: 2 });
    await patch(bad, `${notes}/${alone}`, { n: 2 });
    await patch(good, `${notes}/${shared}`, { n: 3, fixed: true });
    const reply = await revert({ actor: badActor(), since });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ reverted: 1, trashed: 0, restored: 0, conflicts: [{ recordId: shared, collectionId: expect.stringMatching(/^col_/), reason: 'changed_by_other' }], dryRun: false });
    expect(await read(owner, `${notes}/${shared}`)).toMatchObject({ data: { n: 3, fixed: true }, etag: '"3"' });
    expect(await read(owner, `${notes}/${alone}`)).toMatchObject({ data: { n: 1 }, etag: '"3"' });
  });

  it('keeps to the window: since included, until excluded, later changes by the same actor a conflict', async () => {
    const before = await create(owner, notes, { n: 0 });
    const inside = await create(owner, notes, { n: 0 });
    const atUntil = await create(owner, notes, { n: 0 });
    const alsoLater = await create(owner, notes, { n: 0 });
    tick();
    await patch(bad, `${notes}/${before}`, { n: 1 });
    tick();
    const since = t.clock.now().toISOString();
    await patch(bad, `${notes}/${inside}`, { n: 1 });
    await patch(bad, `${notes}/${alsoLater}`, { n: 1 });
    tick();
    const until = t.clock.now().toISOString();
    await patch(bad, `${notes}/${atUntil}`, { n: 1 });
    await patch(bad, `${notes}/${alsoLater}`, { n: 2 });
    const reply = await revert({ actor: badActor(), since, until });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ reverted: 1, trashed: 0, restored: 0, conflicts: [{ recordId: alsoLater, reason: 'changed_after_window' }] });
    expect((await read(owner, `${notes}/${inside}`)).data).toEqual({ n: 0 });
    expect((await read(owner, `${notes}/${before}`)).data).toEqual({ n: 1 });
    expect((await read(owner, `${notes}/${atUntil}`)).data).toEqual({ n: 1 });
    expect((await read(owner, `${notes}/${alsoLater}`)).data).toEqual({ n: 2 });
  });

  it('limits itself to the collections named, by id or by name', async () => {
    const inNotes = await create(owner, notes, { n: 0 });
    const inExtra = await create(owner, extra, { n: 0 });
    const since = windowStart();
    await patch(bad, `${notes}/${inNotes}`, { n: 1 });
    await patch(bad, `${extra}/${inExtra}`, { n: 1 });
    expect((await revert({ actor: badActor(), since, collections: ['extra'] })).body).toMatchObject({ reverted: 1 });
    expect((await read(owner, `${extra}/${inExtra}`)).data).toEqual({ n: 0 });
    expect((await read(owner, `${notes}/${inNotes}`)).data).toEqual({ n: 1 });
    const notesId = (await owner.get('/v1/collections/notes')).body.id;
    expect((await revert({ actor: badActor(), since, collections: [notesId] })).body).toMatchObject({ reverted: 1 });
    expect((await read(owner, `${notes}/${inNotes}`)).data).toEqual({ n: 0 });
    expectError(await revert({ actor: badActor(), since, collections: ['nothing_here'] }), 404, 'NOT_FOUND');
  });

  it('on a dry run answers the same counts and conflicts and writes nothing', async () => {
    const a = await create(owner, notes, { n: 0 });
    const b = await create(owner, notes, { n: 0 });
    const since = windowStart();
    await patch(bad, `${notes}/${a}`, { n: 1 });
    await patch(bad, `${notes}/${b}`, { n: 1 });
    await patch(good, `${notes}/${b}`, { n: 2 });
    await create(bad, extra, { n: 1 });
    const before = await footprint(owner.workspaceId!);
    const dry = await revert({ actor: badActor(), since, dryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({ reverted: 1, trashed: 1, restored: 0, conflicts: [{ recordId: b, collectionId: expect.any(String), reason: 'changed_by_other' }], dryRun: true });
    expect(await footprint(owner.workspaceId!)).toEqual(before);
    const real = await revert({ actor: badActor(), since });
    expect({ ...real.body, dryRun: true }).toEqual(dry.body);
    expect(await footprint(owner.workspaceId!)).not.toEqual(before);
  });

  it('a person\'s changes in one workspace are undone there only', async () => {
    const mine = await create(owner, notes, { n: 0 });
    const theirs = await create(second, notes, { n: 0 });
    const since = windowStart();
    await patch(owner, `${notes}/${mine}`, { n: 1 });
    await patch(second, `${notes}/${theirs}`, { n: 1 });
    const secondBefore = await footprint(second.workspaceId!);
    expect((await revert({ actor: { type: 'person', id: owner.personId }, since })).body).toMatchObject({ reverted: 1, conflicts: [] });
    expect((await read(owner, `${notes}/${mine}`)).data).toEqual({ n: 0 });
    expect(await footprint(second.workspaceId!)).toEqual(secondBefore);
  });

  it('undoes public submissions (actor anonymous) by trashing what they created', async () => {
    const form = await owner.post('/v1/collections', { name: 'signups', settings: { submissions: { enabled: true, origins: ['https://example.com'] } } });
    expect(form.status).toBe(201);
    const since = windowStart();
    const submitted = await new Client(t).post(`/v1/collections/${form.body.id}/records`, { data: { email: 'spam@example.com' } }, { origin: 'https://example.com' });
    expect(submitted.status).toBe(201);
    expect((await revert({ actor: { type: 'anonymous', id: null }, since })).body).toMatchObject({ trashed: 1, reverted: 0, restored: 0, conflicts: [] });
    expect((await read(owner, `/v1/collections/signups/records/${submitted.body.id}`)).trashed).toBe(true);
  });

  it('never overwrites a record another writer changed while it ran: that record becomes a conflict', async () => {
    const raced = await create(owner, notes, { n: 0 });
    const calm = await create(owner, notes, { n: 0 });
    const since = windowStart();
    await patch(bad, `${notes}/${raced}`, { n: 1 });
    await patch(bad, `${notes}/${calm}`, { n: 1 });
    // Another process writes after the revert read the batch and before it writes it.
    const otherProcess = new KeyClient(beside, (await owner.post('/v1/keys', { name: 'Racer', scopes: ['records:update'] })).body.secret);
    beforeNextTransaction = async () => {
      const reply = await otherProcess.patch(`${notes}/${raced}`, { data: { n: 'racer' } });
      if (reply.status !== 200) throw new Error(`racer: ${reply.status} ${JSON.stringify(reply.body)}`);
    };
    const reply = await revert({ actor: badActor(), since });
    expect(beforeNextTransaction).toBeNull();
    expect(reply.body).toMatchObject({ reverted: 1, conflicts: [{ recordId: raced, reason: 'changed_by_other' }] });
    expect(await read(owner, `${notes}/${raced}`)).toMatchObject({ data: { n: 'racer' }, etag: '"3"' });
    expect((await read(owner, `${notes}/${calm}`)).data).toEqual({ n: 0 });
  });

  it('is for owners and admins signed in: members, viewers and keys are refused', async () => {
    const since = windowStart();
    const admin = await addMember(t, owner, 'admin@example.com', 'admin');
    const editor = await addMember(t, owner, 'editor@example.com', 'editor');
    const viewer = await addMember(t, owner, 'viewer@example.com', 'viewer');
    const body = { actor: badActor(), since, dryRun: true };
    expect((await revert(body, admin)).status).toBe(200);
    expectError(await revert(body, editor), 403, 'FORBIDDEN');
    expectError(await revert(body, viewer), 403, 'FORBIDDEN');
    expectError(await revert(body, bad), 403, 'PERSON_REQUIRED');
    expectError(await revert(body, new Client(t)), 401, 'UNAUTHENTICATED');
  });

  it('refuses bad input with 400 INVALID_REQUEST, never a 500', async () => {
    const since = windowStart();
    const until = t.clock.now().toISOString();
    const bodies: unknown[] = [
      {},
      { since },
      { actor: badActor() },
      { actor: { type: 'system', id: null }, since },
      { actor: { type: 'robot', id: badId }, since },
      { actor: { type: 'key' }, since },
      { actor: { type: 'key', id: null }, since },
      { actor: { type: 'key', id: 'key_../../etc' }, since },
      { actor: { type: 'anonymous', id: badId }, since },
      { actor: badActor(), since: 'yesterday' },
      { actor: badActor(), since: 12 },
      { actor: badActor(), since: until, until: since },
      { actor: badActor(), since, until: since },
      { actor: badActor(), since, collections: [] },
      { actor: badActor(), since, collections: ['Bad Name'] },
      { actor: badActor(), since, collections: Array.from({ length: 101 }, (_, n) => `c${n}`) },
      { actor: badActor(), since, dryRun: 'yes' },
      { actor: badActor(), since, extra: 1 },
      { actor: { ...badActor(), more: 1 }, since },
      [],
      'text',
    ];
    for (const body of bodies) expectError(await revert(body as Record<string, unknown>), 400, 'INVALID_REQUEST');
    // A date the format admits but the calendar does not: refused or read, never a 500.
    const odd = await revert({ actor: badActor(), since: '2026-02-30T00:00:00Z' });
    expect(odd.status, JSON.stringify(odd.body)).toBeLessThan(500);
  });

  it('lists a record whose earlier version is no longer kept as history_gone', async () => {
    const old = await create(owner, notes, { n: 0 });
    t.clock.advance(31 * 86_400_000);
    // Sessions end long before a month passes.
    expect((await owner.signIn(OWNER.email, OWNER.password)).status).toBe(200);
    const since = windowStart();
    await patch(bad, `${notes}/${old}`, { n: 1 });
    expect((await purgeExpired(t.deps)).purged.recordVersions).toBeGreaterThan(0);
    const reply = await revert({ actor: badActor(), since });
    expect(reply.body).toMatchObject({ reverted: 0, conflicts: [{ recordId: old, reason: 'history_gone' }] });
    expect((await read(owner, `${notes}/${old}`)).data).toEqual({ n: 1 });
  });

  it('undoes a change by filter: every record a key bulk-updated and bulk-trashed goes back', async () => {
    const ids: string[] = [];
    for (let n = 0; n < 5; n += 1) ids.push(await create(owner, notes, { batch: 'bulk', n }));
    const since = windowStart();
    const updated = await bad.post(`${notes}/bulk-update`, { filter: 'data.batch = \"bulk\"', patch: { processed: true } });
    expect(updated.body, JSON.stringify(updated.body)).toMatchObject({ matched: 5, updated: 5 });
    tick();
    const trashed = await bad.post(`${notes}/bulk-delete`, { filter: 'data.n >= 3 && data.batch = "bulk"' });
    expect(trashed.body, JSON.stringify(trashed.body)).toMatchObject({ matched: 2, trashed: 2 });

    const reply = await revert({ actor: badActor(), since });
    expect(reply.body).toEqual({ reverted: 3, trashed: 0, restored: 2, conflicts: [], dryRun: false });
    for (const [n, id] of ids.entries()) expect(await read(owner, `${notes}/${id}`)).toMatchObject({ data: { batch: 'bulk', n }, trashed: false });
  });
});
