import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { inNewWorkspace, signedInOwner, type Client } from './support/client.js';
import { outbox } from './support/events.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * Imports of several batches (2,000 rows each: records and their events written together, with
 * COPY on PostgreSQL and multi-row INSERTs on SQLite): every record and event kept in body order,
 * and nothing at all kept when the import fails after batches were already written, whether a row
 * is refused, the database refuses a write or the connection is lost.
 */
const NDJSON = 'application/x-ndjson';

const row = (i: number) => ({ i, name: `person ${i}`, note: i % 7 === 0 ? 'tab\there, backslash \\ and "quotes"' : 'plain' });
const ndjson = (rows: unknown[]) => rows.map((data) => JSON.stringify(data)).join('\n') + '\n';
const rows = (count: number) => Array.from({ length: count }, (_, i) => row(i));

describeEachEngine('imports of many batches', (engine) => {
  let t: TestApp;
  let owner: Client;
  beforeEach(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
    expect((await owner.post('/v1/collections', { name: 'leads' })).status).toBe(201);
  });
  afterEach(async () => { await t.close(); });

  const importBody = (client: Client, body: string, query = '') =>
    client.call('POST', `/v1/collections/leads/import${query}`, body, { 'content-type': NDJSON });

  /** Every record of a workspace, and every event, as stored: what must not change when an import fails. */
  async function storedState(workspaceId: string) {
    const records = await t.deps.db.selectFrom('records').select(['id', 'collection_id', sql<string>`cast(data as text)`.as('data'), 'created_at']).where('workspace_id', '=', workspaceId).orderBy('id').execute();
    const events = (await outbox(t)).filter((event) => event.workspaceId === workspaceId);
    return { records, events };
  }

  const recordCount = async () => Number((await t.deps.db.selectFrom('records').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  /** A second workspace with a collection of the same name and records in it, made by create and by import. */
  async function neighbour() {
    const other = await inNewWorkspace(t, owner, 'Neighbour');
    expect((await other.post('/v1/collections', { name: 'leads' })).status).toBe(201);
    expect((await other.post('/v1/collections/leads/records', { data: { created: true } })).status).toBe(201);
    expect((await importBody(other, ndjson(rows(2500)))).body.imported).toBe(2500);
    return { client: other, before: await storedState(other.workspaceId!) };
  }

  it('keeps every record of a 5,500-row import in body order, each with its one record.created event', async () => {
    const data = rows(5500);
    const reply = await importBody(owner, ndjson(data));
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ imported: 5500, rejected: [], rejectedCount: 0 });

    const { records, events } = await storedState(owner.workspaceId!);
    expect(records.map((record) => JSON.parse(record.data))).toEqual(data);
    expect(new Set(records.map((record) => record.created_at)).size).toBe(1);
    const created = events.filter((event) => event.type === 'record.created');
    expect(created).toHaveLength(5500);
    // In id order the events follow the records, one each, carrying the record as imported.
    expect(created.map((event) => event.data)).toEqual(records.map((record) => ({ record: { id: record.id, data: JSON.parse(record.data) } })));
    expect(created.every((event) => event.createdAt === records[0]!.created_at)).toBe(true);
  });

  it('all-or-nothing: a refused row after three written batches keeps nothing, and another workspace keeps all it had', async () => {
    const neighbourhood = await neighbour();
    const mine = await storedState(owner.workspaceId!);
    const body = ndjson(rows(6500)) + '[1]\n' + ndjson(rows(10));

    const reply = await importBody(owner, body);
    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toContain('Line 6501');
    expect(await storedState(owner.workspaceId!)).toEqual(mine);
    expect(await storedState(neighbourhood.client.workspaceId!)).toEqual(neighbourhood.before);

    // The connection came back clean: the next import is written whole.
    expect((await importBody(owner, ndjson(rows(10)))).body.imported).toBe(10);
  });

  it('a write the database refuses in the third batch keeps nothing of the first two', async () => {
    const neighbourhood = await neighbour();
    const mine = await storedState(owner.workspaceId!);
    await refuseRowsWhere(t, engine, 'refuse');
    const data: Record<string, unknown>[] = rows(6500);
    data[4500] = { ...data[4500]!, boom: 'refuse' };

    const reply = await importBody(owner, ndjson(data));
    expect(reply.status).toBe(500);
    expect(await storedState(owner.workspaceId!)).toEqual(mine);
    expect(await storedState(neighbourhood.client.workspaceId!)).toEqual(neighbourhood.before);
    expect((await importBody(owner, ndjson(rows(3000)))).body.imported).toBe(3000);
  });

  it.runIf(engine === 'postgres')('a connection lost in the middle of a COPY keeps nothing of the import, and the pool goes on', async () => {
    const before = await recordCount();
    await refuseRowsWhere(t, engine, 'disconnect');
    const data: Record<string, unknown>[] = rows(6500);
    data[4500] = { ...data[4500]!, boom: 'disconnect' };

    const reply = await importBody(owner, ndjson(data));
    expect(reply.status).toBe(503);
    expect(reply.body.error.code).toBe('UNAVAILABLE');
    expect(await recordCount()).toBe(before);
    expect((await outbox(t)).filter((event) => event.type === 'record.created')).toHaveLength(0);
    expect((await importBody(owner, ndjson(rows(3000)))).body.imported).toBe(3000);
  });
});

/**
 * A trigger that fails the write of any record whose data.boom is `refuse` (an error raised by
 * the database), or on PostgreSQL `disconnect` (the backend ends its own connection, as a
 * restart or a network cut would): a failure in the middle of a batch, after earlier ones.
 */
async function refuseRowsWhere(t: TestApp, engine: string, boom: 'refuse' | 'disconnect'): Promise<void> {
  if (engine === 'sqlite') {
    await sql.raw(`create trigger refuse_boom before insert on records when json_extract(new.data, '$.boom') = '${boom}' begin select raise(abort, 'refused by the test'); end`).execute(t.deps.db);
    return;
  }
  const action = boom === 'refuse' ? `raise exception 'refused by the test'` : 'perform pg_terminate_backend(pg_backend_pid())';
  await sql.raw(`create function refuse_boom() returns trigger language plpgsql as $$ begin if new.data->>'boom' = '${boom}' then ${action}; end if; return new; end $$`).execute(t.deps.db);
  await sql.raw('create trigger refuse_boom before insert on records for each row execute function refuse_boom()').execute(t.deps.db);
}
