import { afterEach, beforeEach, expect, it } from 'vitest';
import { IDEMPOTENCY_WINDOW_MS } from '../src/modules/idempotency/idempotency.js';
import { purgeExpired } from '../src/modules/housekeeping/purge-expired.js';
import { inNewWorkspace, signedInOwner, type Client } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

const HOUR = 3600 * 1000;

// Stored answers of Idempotency-Key creates are kept for their 24-hour window, then deleted.
describeEachEngine('idempotency answers past their window', (engine) => {
  let t: TestApp;
  let first: Client;
  let second: Client;
  beforeEach(async () => {
    t = await startTestApp(engine);
    first = await signedInOwner(t);
    second = await inNewWorkspace(t, first, 'second');
    for (const workspace of [first, second]) expect((await workspace.post('/v1/collections', { name: 'leads' })).status).toBe(201);
  });
  afterEach(async () => {
    await t.close();
  });

  const create = async (client: Client, key: string) => {
    const reply = await client.post('/v1/collections/leads/records', { data: { key } }, { 'idempotency-key': key });
    expect(reply.status).toBe(201);
    return reply.body.id as string;
  };
  const storedKeys = async (client: Client) =>
    (await t.deps.db.selectFrom('idempotency_keys').select('key').where('workspace_id', '=', client.workspaceId!).orderBy('key').execute()).map((row) => row.key);

  it('a workspace\'s next write after its window deletes its expired answers, and no other workspace\'s', async () => {
    await create(first, 'a-1');
    await create(first, 'a-2');
    await create(second, 'b-1');
    t.clock.advance(IDEMPOTENCY_WINDOW_MS - HOUR);
    await create(first, 'a-3'); // within the hour since the last purge: nothing else is read
    t.clock.advance(HOUR + 1);
    // a-1 and a-2 are now past their window, a-3 is not.
    await create(first, 'a-4');
    expect(await storedKeys(first)).toEqual(['a-3', 'a-4']);
    // The other workspace wrote nothing: its expired answer is still there, for housekeeping.
    expect(await storedKeys(second)).toEqual(['b-1']);
    // An answer within its window is still replayed.
    const again = await first.post('/v1/collections/leads/records', { data: { key: 'a-3' } }, { 'idempotency-key': 'a-3' });
    expect(again.status).toBe(201);
  });

  it('housekeeping deletes every workspace\'s expired answers and keeps the rest', async () => {
    await create(first, 'a-1');
    await create(second, 'b-1');
    t.clock.advance(HOUR);
    await create(second, 'b-2');
    t.clock.advance(IDEMPOTENCY_WINDOW_MS - HOUR + 1);
    expect((await purgeExpired(t.deps)).purged.idempotencyAnswers).toBe(2);
    expect(await storedKeys(first)).toEqual([]);
    expect(await storedKeys(second)).toEqual(['b-2']);
  });
});
