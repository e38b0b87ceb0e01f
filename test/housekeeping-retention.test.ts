import { afterEach, expect, it } from 'vitest';
import { closeSender } from '../src/delivery/guard-options.js';
import { purgeExpired } from '../src/modules/housekeeping/purge-expired.js';
import { newId } from '../src/ids.js';
import { DeliveryWorker } from '../src/worker/delivery-worker.js';
import { inNewWorkspace, signedInOwner, type Client } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';
import { Receiver } from './support/receiver.js';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/**
 * Housekeeping's time-ordered purges (docs/history.md, docs/webhooks.md, docs/operations.md):
 * record versions past PLAINBASE_HISTORY_DAYS, a record's newest always kept, and the delivery
 * log past its 30 days, judged with a clock the test moves, the same in both workspaces, a short
 * batch at a time, the walk stopping at the cutoff.
 */
describeEachEngine('housekeeping: history and the delivery log', (engine) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const start = async (overrides: Parameters<typeof startTestApp>[1] = {}) => {
    // Sessions that outlive the test's months, so the API can still be asked at the end.
    const t = await startTestApp(engine, { historyDays: 30, sessionTtlSeconds: 120 * 24 * 3600, sessionIdleSeconds: 0, ...overrides });
    cleanups.push(() => t.close());
    return t;
  };

  const revisions = async (t: TestApp, recordId: string) =>
    (await t.deps.db.selectFrom('record_versions').select('revision').where('record_id', '=', recordId).orderBy('revision').execute()).map((row) => Number(row.revision));

  it('deletes versions past the history\'s days in both workspaces alike, keeping each record\'s newest however old', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    const second = await inNewWorkspace(t, owner, 'second');
    const records = new Map<Client, { a: string; b: string }>();
    for (const client of [owner, second]) {
      expect((await client.post('/v1/collections', { name: 'notes' })).status).toBe(201);
      const a = (await client.post('/v1/collections/notes/records', { data: { n: 1 } })).body.id as string;
      for (const n of [2, 3]) expect((await client.patch(`/v1/collections/notes/records/${a}`, { data: { n } })).status).toBe(200);
      const b = (await client.post('/v1/collections/notes/records', { data: { n: 1 } })).body.id as string;
      records.set(client, { a, b });
    }
    t.clock.advance(29 * DAY);
    expect((await owner.patch(`/v1/collections/notes/records/${records.get(owner)!.a}`, { data: { n: 4 } })).status).toBe(200);

    // 30 days less a minute: nothing is old enough yet.
    t.clock.advance(DAY - MINUTE);
    expect((await purgeExpired(t.deps)).purged.recordVersions).toBe(0);

    t.clock.advance(2 * MINUTE);
    const round = await purgeExpired(t.deps, 2);
    // The first workspace's record a loses revisions 1-3 (4 is a day old); the second's loses 1
    // and 2, and keeps 3: 30 days old, but its newest. Each b has one version, its newest.
    expect(round.purged.recordVersions).toBe(5);
    expect(round.largestBatch).toBeLessThanOrEqual(2);
    expect(await revisions(t, records.get(owner)!.a)).toEqual([4]);
    expect(await revisions(t, records.get(second)!.a)).toEqual([3]);
    for (const client of [owner, second]) expect(await revisions(t, records.get(client)!.b)).toEqual([1]);
    const listed = await second.get(`/v1/collections/notes/records/${records.get(second)!.a}/versions`);
    expect([listed.status, listed.body.data.map((version: { revision: number }) => version.revision)]).toEqual([200, [3]]);
    expect((await second.get(`/v1/collections/notes/records/${records.get(second)!.a}/versions/1`)).status).toBe(404);
    expect((await purgeExpired(t.deps)).purged.recordVersions).toBe(0);
  });

  it('goes through versions of one time (an import\'s) in batches of the batch size, and stops its walk at the cutoff', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    const second = await inNewWorkspace(t, owner, 'second');
    // 1,200 revisions of a record all written at one instant, straight into the table, then as
    // many fresh ones of another record in the second workspace.
    const old = t.clock.now();
    const oldId = await insertVersions(t, owner.workspaceId!, 1200, old);
    t.clock.advance(31 * DAY);
    const freshId = await insertVersions(t, second.workspaceId!, 1200, t.clock.now());

    const round = await purgeExpired(t.deps, 100);
    expect(round.purged.recordVersions).toBe(1199);
    expect(round.largestBatch).toBeLessThanOrEqual(100);
    expect(await revisions(t, oldId)).toEqual([1200]);
    expect((await revisions(t, freshId)).length).toBe(1200);

    // Only fresh rows left: every kind takes one batch, none reads on past its cutoff (a walk of
    // the whole table would take 13 batches of 100 for the versions alone).
    const idle = await purgeExpired(t.deps, 100);
    expect(idle.purged.recordVersions).toBe(0);
    expect(idle.batches).toBe(Object.keys(idle.purged).length);
  });

  it('deletes the delivery log past 30 days in both workspaces alike, keeping events a delivery still needs', async () => {
    const t = await start({ env: 'development', webhookAllowPrivate: true });
    const ok = new Receiver();
    const failing = new Receiver();
    failing.status = 503;
    const [okUrl, failingUrl] = [await ok.start(), await failing.start()];
    cleanups.push(async () => {
      await Promise.all([ok.stop(), failing.stop()]);
      await closeSender(t.deps);
    });
    const worker = new DeliveryWorker(t.deps);
    const owner = await signedInOwner(t);
    const second = await inNewWorkspace(t, owner, 'second');
    const hooks = new Map<Client, string>();
    for (const client of [owner, second]) {
      expect((await client.post('/v1/collections', { name: 'leads' })).status).toBe(201);
      const created = await client.post('/v1/webhooks', { url: okUrl, events: ['record.created'] });
      expect(created.status).toBe(201);
      hooks.set(client, created.body.id);
    }
    // The second workspace's webhook is off: what it watches is held.
    expect((await second.post(`/v1/webhooks/${hooks.get(second)}/disable`)).status).toBe(200);
    // The owner's second webhook keeps failing: its delivery waits for retries.
    const retrying = (await owner.post('/v1/webhooks', { url: failingUrl, events: ['record.created'] })).body.id as string;
    const create = async (client: Client, n: number) => expect((await client.post('/v1/collections/leads/records', { data: { n } })).status).toBe(201);

    for (const client of [owner, second]) await create(client, 0);
    await worker.drain();
    t.clock.advance(29 * DAY);
    for (const client of [owner, second]) await create(client, 29);
    // Also retries the failing delivery, which stays pending.
    await worker.drain();
    expect(failing.received.length).toBe(3);

    const rows = async (client: Client) => {
      const deliveries = await t.deps.db.selectFrom('deliveries').select(['id', 'webhook_id', 'state', 'event_id', 'created_at']).where('workspace_id', '=', client.workspaceId!).orderBy('id').execute();
      const attempts = await t.deps.db.selectFrom('delivery_attempts').select(['delivery_id', 'at']).where('workspace_id', '=', client.workspaceId!).orderBy('at').execute();
      const events = await t.deps.db.selectFrom('events').select(['id', 'type', 'created_at']).where('workspace_id', '=', client.workspaceId!).orderBy('id').execute();
      return { deliveries, attempts, events };
    };
    const before = { owner: await rows(owner), second: await rows(second) };
    expect(before.owner.deliveries.map((row) => row.state)).toEqual(['succeeded', 'pending', 'succeeded', 'pending']);
    expect(before.second.deliveries.map((row) => row.state)).toEqual(['pending', 'pending']);

    t.clock.advance(DAY + MINUTE);
    const round = await purgeExpired(t.deps, 1);
    expect(round.largestBatch).toBe(1);
    expect(round.purged).toMatchObject({ deliveryAttempts: 2, finishedDeliveries: 1, heldDeliveries: 1 });
    const after = { owner: await rows(owner), second: await rows(second) };
    const dayZero = t.clock.now().getTime() - 30 * DAY - MINUTE;
    const madeBefore = (row: { created_at: string }) => Date.parse(row.created_at) < dayZero + DAY;

    // The owner: day 0's finished delivery goes with its attempt; the retrying one stays (with
    // its day-29 attempt) and so does the event it sends. The second workspace: the day-0 held
    // delivery and its event go, day 29's stay.
    expect(after.owner.deliveries).toEqual(before.owner.deliveries.filter((row) => !(madeBefore(row) && row.state === 'succeeded')));
    expect(after.owner.deliveries.filter(madeBefore).map((row) => row.webhook_id)).toEqual([retrying]);
    expect(after.owner.attempts.map((row) => Date.parse(row.at) >= dayZero + 29 * DAY)).toEqual([true, true, true]);
    expect(after.second.deliveries).toEqual(before.second.deliveries.filter((row) => !madeBefore(row)));
    expect(after.second.attempts).toEqual([]);
    // Every delivery left still has its event; of day 0's, only the one the retrying delivery sends is left.
    for (const side of [after.owner, after.second]) {
      for (const row of side.deliveries) expect(side.events.map((event) => event.id)).toContain(row.event_id);
    }
    const dayZeroEvents = (side: typeof after.owner) => side.events.filter(madeBefore);
    expect(dayZeroEvents(after.owner).map((event) => event.id)).toEqual(after.owner.deliveries.filter(madeBefore).map((row) => row.event_id));
    expect(dayZeroEvents(after.second)).toEqual([]);
    expect(after.second.events.filter((event) => event.type === 'record.created')).toHaveLength(1);
    expect(after.owner.events.filter((event) => event.type === 'record.created')).toHaveLength(2);

    // The delivery log as the API shows it, in each workspace.
    expect((await owner.get(`/v1/webhooks/${hooks.get(owner)}/deliveries`)).body.data).toHaveLength(1);
    expect((await owner.get(`/v1/webhooks/${retrying}/deliveries`)).body.data).toHaveLength(2);
    expect((await second.get(`/v1/webhooks/${hooks.get(second)}/deliveries`)).body.data).toHaveLength(1);
    expect((await purgeExpired(t.deps)).purged).toMatchObject({ deliveryAttempts: 0, finishedDeliveries: 0, heldDeliveries: 0, deliveredEvents: 0 });
  });
});

/** `count` revisions of a new record of a workspace, all changed at `at`, straight into the table; answers its id. */
async function insertVersions(t: TestApp, workspaceId: string, count: number, at: Date): Promise<string> {
  const recordId = newId('rec', at.getTime());
  const rows = Array.from({ length: count }, (_, index) => ({
    workspace_id: workspaceId,
    collection_id: 'col_test',
    record_id: recordId,
    revision: index + 1,
    data: JSON.stringify({ n: index }),
    schema_version: null,
    change: index === 0 ? 'created' : 'updated',
    changed_at: at.toISOString(),
    actor_type: 'system',
    actor_id: null,
    actor_name: null,
    request_id: null,
  }));
  for (let i = 0; i < rows.length; i += 200) await t.deps.db.insertInto('record_versions').values(rows.slice(i, i + 200)).execute();
  return recordId;
}
