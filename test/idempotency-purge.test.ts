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

  it('a write deletes only its own key\'s expired answer, which stands in its way; housekeeping the rest', async () => {
    await create(first, 'a-1');
    await create(first, 'a-2');
    await create(second, 'b-1');
    t.clock.advance(IDEMPOTENCY_WINDOW_MS + 1);
    // The same key after its window: a new create, stored in place of the expired answer.
    const again = await first.post('/v1/collections/leads/records', { data: { key: 'a-1' } }, { 'idempotency-key': 'a-1' });
    expect(again.status).toBe(201);
    await create(first, 'a-3');
    // No request's transaction deletes the workspace's other expired answers.
    expect(await storedKeys(first)).toEqual(['a-1', 'a-2', 'a-3']);
    expect(await storedKeys(second)).toEqual(['b-1']);
    expect((await purgeExpired(t.deps)).purged.idempotencyAnswers).toBe(2);
    expect(await storedKeys(first)).toEqual(['a-1', 'a-3']);
    expect(await storedKeys(second)).toEqual([]);
    // An answer within its window is still replayed.
    const replay = await first.post('/v1/collections/leads/records', { data: { key: 'a-1' } }, { 'idempotency-key': 'a-1' });
    expect([replay.status, replay.body.id]).toEqual([201, again.body.id]);
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
